/* regbench dashboard pages: the overview and the series chart.
 *
 * Data comes as scripts that call window.__regbench_data(name, payload): the same files in a
 * static report (opened from file://, where fetch() of local files is refused) and on the live
 * dashboard, which answers the same paths. Written without a framework: two small pages. */
(function () {
  "use strict";
  var waiting = {};
  var loaded = {};
  window.__regbench_data = function (name, payload) {
    loaded[name] = payload;
    if (waiting[name]) { waiting[name].resolve(payload); }
  };

  /* The payload `name` (index, spark/K, series/ID, runs/ID), loaded once by a <script>. */
  function load(name) {
    if (loaded[name]) { return Promise.resolve(loaded[name]); }
    if (waiting[name]) { return waiting[name].promise; }
    var entry = {};
    entry.promise = new Promise(function (resolve, reject) {
      entry.resolve = resolve;
      var s = document.createElement("script");
      s.src = "data/" + name + ".js";
      s.onerror = function () { delete waiting[name]; reject(new Error("cannot load " + name)); };
      document.head.appendChild(s);
    });
    waiting[name] = entry;
    return entry.promise;
  }

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) { e.setAttribute(k, attrs[k]); }
    if (text !== undefined && text !== null) { e.textContent = text; }
    return e;
  }

  // A version by its tag where it has one (v1.2.0), else by its stored name (a short sha).
  function tagged(v) { return v.label && v.label !== v.name; }
  function shortLabel(v) { return tagged(v) ? v.label : v.name.slice(0, 7); }
  function fullLabel(v) { return tagged(v) ? v.label + " (" + v.name + ")" : v.name; }

  function pct(x) { return x === null || x === undefined ? "?" : (x >= 0 ? "+" : "") + (100 * x).toFixed(1) + "%"; }
  // A change from exactly 0 in every run (a count such as allocs/op): JSON carries no infinity.
  function changePct(c) { return c.from_zero ? "+∞ (from 0)" : pct(c.change); }
  function fmt(x) { return x === null || x === undefined ? "–" : Number(x).toPrecision(4); }
  var STATE_TEXT = { changed: "changed", stable: "stable", noisy: "too noisy to judge", failing: "failing" };

  function sparkline(values) {
    var ns = "http://www.w3.org/2000/svg", w = 160, h = 28;
    var svg = document.createElementNS(ns, "svg");
    svg.setAttribute("class", "spark"); svg.setAttribute("width", w); svg.setAttribute("height", h);
    var ys = values.filter(function (v) { return v !== null; });
    if (ys.length) {
      var lo = Math.min.apply(null, ys), hi = Math.max.apply(null, ys), span = hi - lo || 1;
      var n = Math.max(values.length - 1, 1), pts = [];
      values.forEach(function (v, i) {
        if (v !== null) { pts.push((i * (w - 4) / n + 2).toFixed(1) + "," + (h - 2 - (v - lo) / span * (h - 4)).toFixed(1)); }
      });
      var line = document.createElementNS(ns, "polyline");
      line.setAttribute("points", pts.join(" "));
      svg.appendChild(line);
    }
    return svg;
  }

  function param(name) { return new URLSearchParams(window.location.search).get(name); }

  /* ------------------------------------------------------------------ overview */
  function overview() {
    var PAGE = 50, page = 0, rows = [], index = null;
    var q = function (id) { return document.getElementById(id); };
    function fill(select, names) {
      names.forEach(function (n, i) { select.appendChild(el("option", { value: String(i) }, n)); });
    }
    function filtered() {
      var text = q("search").value.trim().toLowerCase();
      var b = q("f-benchmark").value, c = q("f-config").value, m = q("f-machine").value, st = q("f-state").value;
      var stIdx = st ? index.states.indexOf(st) : -1;
      return rows.filter(function (r) {
        return (!text || index.benchmarks[r[1]].toLowerCase().indexOf(text) >= 0) &&
          (b === "" || r[1] === +b) && (c === "" || r[2] === +c) && (m === "" || r[3] === +m) &&
          (stIdx < 0 || r[4] === stIdx);
      });
    }
    function render() {
      document.body.dataset.ready = "no";
      var list = filtered(), pages = Math.max(1, Math.ceil(list.length / PAGE));
      page = Math.min(page, pages - 1);
      var shown = list.slice(page * PAGE, (page + 1) * PAGE);
      var tbody = q("series").querySelector("tbody");
      tbody.textContent = "";
      var chunks = {};
      shown.forEach(function (r) {
        var state = index.states[r[4]];
        var tr = el("tr", { "data-series-id": r[0], "data-state": state });
        var td = el("td"); td.appendChild(el("a", { href: "series.html?s=" + r[0] }, index.benchmarks[r[1]]));
        tr.appendChild(td);
        tr.appendChild(el("td", {}, index.configs[r[2]]));
        tr.appendChild(el("td", {}, index.machines[r[3]]));
        var ts = el("td"); ts.appendChild(el("span", { "class": "state state-" + state }, STATE_TEXT[state])); tr.appendChild(ts);
        tr.appendChild(el("td", { "class": "spark-cell" }));
        tbody.appendChild(tr);
        chunks[Math.floor(r.pos / index.chunk)] = true;
      });
      q("count").textContent = list.length + " of " + rows.length + " series";
      q("page-info").textContent = "page " + (page + 1) + " of " + pages;
      q("prev").disabled = page === 0; q("next").disabled = page >= pages - 1;
      var want = Object.keys(chunks).map(function (k) { return load("spark/" + k); });
      return Promise.all(want).then(function (parts) {
        var spark = {};
        parts.forEach(function (p) { Object.assign(spark, p.series); });
        tbody.querySelectorAll("tr").forEach(function (tr) {
          var v = spark[tr.dataset.seriesId];
          if (v) { tr.querySelector(".spark-cell").appendChild(sparkline(v)); }
        });
        // first complete render, in ms since navigation (benchmarks/bench_dashboard.py reads it)
        if (!window.__regbench_ready_at) { window.__regbench_ready_at = performance.now(); }
        document.body.dataset.ready = "yes";
      });
    }
    load("index").then(function (idx) {
      index = idx;
      rows = idx.series.map(function (r, i) { r.pos = i; return r; });
      fill(q("f-benchmark"), idx.benchmarks); fill(q("f-config"), idx.configs); fill(q("f-machine"), idx.machines);
      var st = param("state"); if (st) { q("f-state").value = st; }
      ["search", "f-benchmark", "f-config", "f-machine", "f-state"].forEach(function (id) {
        q(id).addEventListener(id === "search" ? "input" : "change", function () { page = 0; render(); });
      });
      q("prev").addEventListener("click", function () { page -= 1; render(); });
      q("next").addEventListener("click", function () { page += 1; render(); });
      return render();
    }).catch(function (e) { q("count").textContent = e.message; q("count").className = "error"; });
  }

  /* -------------------------------------------------------------------- series */
  function series(sid) {
    sid = sid || param("s");
    var q = function (id) { return document.getElementById(id); };
    var plot = null, data = null;
    function fail(msg) { var e = q("error"); e.hidden = false; e.textContent = msg; document.body.dataset.ready = "yes"; }
    if (!sid) { fail("No series given: open a series from the list of every series."); return; }

    function draw(runs) {
      var n = data.versions.length;
      var xs = [], est = [], low = [], high = [], pts = [];
      data.versions.forEach(function (v, k) {
        xs.push(k); est.push(v.estimate); low.push(v.low); high.push(v.high); pts.push(null);
      });
      if (runs) {
        // one x per run, spread a little around its version so that equal values stay visible
        var per = {};
        runs.forEach(function (r) { (per[r[0]] = per[r[0]] || []).push(r[1]); });
        Object.keys(per).forEach(function (k) {
          var vals = per[k];
          vals.forEach(function (y, j) {
            xs.push(+k + (j + 1) / (vals.length + 1) * 0.5 - 0.25); est.push(null); low.push(null); high.push(null); pts.push(y);
          });
        });
        var order = xs.map(function (x, i) { return i; }).sort(function (a, b) { return xs[a] - xs[b]; });
        var pick = function (arr) { return order.map(function (i) { return arr[i]; }); };
        xs = pick(xs); est = pick(est); low = pick(low); high = pick(high); pts = pick(pts);
      }
      var changes = data.changes;
      var markers = {
        hooks: {
          // the visible range, for people's tests and tools: zoom changes it
          setScale: [function (u, key) {
            if (key === "x") { q("chart").dataset.xmin = String(u.scales.x.min); q("chart").dataset.xmax = String(u.scales.x.max); }
          }],
          draw: [function (u) {
            var ctx = u.ctx;
            ctx.save();
            changes.forEach(function (c) {
              if (c.index === null) { return; }
              var x = u.valToPos(c.index - 0.5, "x", true);
              if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) { return; }
              ctx.strokeStyle = c.kind === "improvement" ? "#067647" : "#b42318";
              ctx.lineWidth = 2 * devicePixelRatio;
              ctx.setLineDash([6 * devicePixelRatio, 4 * devicePixelRatio]);
              ctx.beginPath(); ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height); ctx.stroke();
              ctx.setLineDash([]);
              ctx.fillStyle = ctx.strokeStyle;
              ctx.font = (12 * devicePixelRatio) + "px sans-serif";
              ctx.fillText(c.kind === "failure" ? "failing" : changePct(c), x + 4 * devicePixelRatio, u.bbox.top + 14 * devicePixelRatio);
            });
            ctx.restore();
          }]
        }
      };
      var width = Math.max(q("chart").clientWidth - 20, 300);
      var opts = {
        width: width, height: 360, plugins: [markers],
        // half a version of margin on both sides of the whole history; a zoom keeps its range
        scales: { x: { time: false, range: function (u, min, max) {
          return min === xs[0] && max === xs[xs.length - 1] ? [Math.min(min, -0.5), Math.max(max, n - 0.5)] : [min, max];
        } } },
        axes: [
          { label: "version", values: function (u, splits) {
            return splits.map(function (x) { return Number.isInteger(x) && data.versions[x] ? shortLabel(data.versions[x]) : ""; });
          }, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000] },
          { label: data.unit, size: 70 }
        ],
        series: [
          { label: "version", value: function (u, x) { var k = Math.round(x); return data.versions[k] ? fullLabel(data.versions[k]) : ""; } },
          { label: "estimate", stroke: "#2f5bd3", width: 2, spanGaps: true, points: { size: 7 } },
          { label: "low", stroke: "rgba(47,91,211,.45)", width: 1, spanGaps: true, dash: [4, 3] },
          { label: "high", stroke: "rgba(47,91,211,.45)", width: 1, spanGaps: true, dash: [4, 3] },
          { label: "runs", stroke: "#888", width: 0, paths: function () { return null; }, points: { show: true, size: 5, fill: "rgba(80,80,80,.5)" } }
        ],
        bands: [{ series: [3, 2], fill: "rgba(47,91,211,.12)" }],
        cursor: { drag: { x: true, y: false } }
      };
      if (plot) { plot.destroy(); }
      q("chart").textContent = "";
      plot = new uPlot(opts, [xs, est, low, high, pts], q("chart"));
      var ch = q("chart");
      ch.dataset.versions = String(n);
      ch.dataset.intervals = String(data.versions.filter(function (v) { return v.low !== null && v.high !== null; }).length);
      ch.dataset.runs = String(pts.filter(function (p) { return p !== null; }).length);
      ch.dataset.changes = changes.map(function (c) { return c.version; }).join(" ");
    }

    load("series/" + sid).then(function (d) {
      data = d;
      document.title = d.benchmark + " · regbench";
      q("title").textContent = d.benchmark;
      q("subtitle").textContent = d.config + " · " + d.machine + " · " + d.unit + ", " + d.direction + " is better · " + STATE_TEXT[d.state];
      q("confidence").textContent = Math.round(d.confidence * 100) + "%";
      if (d.diagnosis) {  // null: no version has two runs of two samples to diagnose
        q("diagnosis-link").href = "diagnosis-" + d.diagnosis + ".html";
      } else {
        q("diagnosis-link").hidden = true;
      }
      var configs = [], machines = [];
      d.siblings.forEach(function (s) {
        if (configs.indexOf(s.config) < 0) { configs.push(s.config); }
        if (machines.indexOf(s.machine) < 0) { machines.push(s.machine); }
      });
      configs.forEach(function (c) { var o = el("option", { value: c }, c); if (c === d.config) { o.selected = true; } q("config").appendChild(o); });
      machines.forEach(function (m) { var o = el("option", { value: m }, m); if (m === d.machine) { o.selected = true; } q("machine").appendChild(o); });
      function go() {
        var c = q("config").value, m = q("machine").value;
        var hit = d.siblings.filter(function (s) { return s.config === c && s.machine === m; })[0] ||
          d.siblings.filter(function (s) { return s.config === c; })[0];
        if (hit && hit.id !== d.id) { window.location.href = "series.html?s=" + hit.id; }
      }
      q("config").addEventListener("change", go); q("machine").addEventListener("change", go);

      var ul = q("changes");
      if (!d.changes.length) { ul.appendChild(el("li", { "class": "muted" }, "No change recorded for this series.")); }
      d.changes.forEach(function (c) {
        var li = el("li", { "class": "change " + c.kind, "data-version": c.version, "data-previous": c.previous,
          "data-commit": c.commit || "", "data-kind": c.kind, "data-change": String(c.change), "data-status": c.status });
        // a failure has no size: every run failed from its version on, and its error says why
        li.appendChild(document.createTextNode(c.kind === "failure" ? "failing (every run) from " :
          c.kind + " of " + changePct(c) + (c.from_zero ? "" : " [" + pct(c.low) + ", " + pct(c.high) + "]") + " at "));
        var label = c.version_label && c.version_label !== c.version ? c.version_label : (c.commit || c.version).slice(0, 10);
        li.appendChild(c.commit_url ? el("a", { href: c.commit_url }, label) : el("code", {}, label));
        // a creep: its change is spread over version .. until, and no single commit made it
        if (c.until) { li.appendChild(document.createTextNode(" .. " + (c.until_label && c.until_label !== c.until ? c.until_label : c.until.slice(0, 10)) + " (a creep)")); }
        li.appendChild(document.createTextNode((c.never_succeeded ? ", never succeeded" :
          (c.kind === "failure" ? ", last ok at " : " since ") + c.previous.slice(0, 10)) +
          " (alert #" + c.alert + ", " + c.status + (c.kind === "failure" && c.fixed_by ? ", runs again at " + c.fixed_by.slice(0, 10) :
            c.kind === "failure" && c.status === "fixed" ? ", no longer run" : "") + ")" +
          (c.kind === "failure" && c.error ? ": " + c.error : "")));
        ul.appendChild(li);
      });
      var tbody = q("versions").querySelector("tbody");
      d.versions.forEach(function (v) {
        var tr = el("tr", { "data-version": v.name });
        tr.appendChild(el("td", {}, tagged(v) ? v.label : v.name.slice(0, 12)));
        var td = el("td");
        if (v.commit) { td.appendChild(v.commit_url ? el("a", { href: v.commit_url }, v.commit.slice(0, 10)) : el("code", {}, v.commit.slice(0, 10))); }
        tr.appendChild(td);
        tr.appendChild(el("td", {}, v.time || ""));
        tr.appendChild(el("td", {}, fmt(v.estimate)));
        tr.appendChild(el("td", {}, "[" + fmt(v.low) + ", " + fmt(v.high) + "]"));
        tr.appendChild(el("td", {}, String(v.runs) + (v.failed ? " (" + v.failed + " failed)" : "")));
        tbody.appendChild(tr);
      });
      draw(null);
      q("show-runs").addEventListener("click", function () {
        q("show-runs").disabled = true;
        load("runs/" + sid).then(function (r) { draw(r.runs); document.body.dataset.runs = "yes"; })
          .catch(function (e) { fail(e.message); });
      });
      document.body.dataset.ready = "yes";
    }).catch(function () { fail("No series " + sid + " in this report."); });
  }

  window.regbench = { overview: overview, series: series, load: load };
})();
