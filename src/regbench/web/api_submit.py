"""Storing one submission of the HTTP API (``POST /api/v1/runs``): parse, check, store once.

The body is parsed by the same code as ``regbench import`` (the canonical JSON lines or CSV, or
another harness's format through its adapter) and stored by it, in one transaction that also
records the submission's id (:mod:`regbench.store.submissions`); a canonical body's runs already
stored are skipped and a re-measurement goes after the stored runs
(:func:`regbench.ingest.plan_import`).  A retry with the same id and
the same content is answered from the record and stores nothing; the same id with another content
is a :class:`~regbench.errors.ConflictError`.  Errors about the body name its line as
``body:LINE: what is wrong``.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from dataclasses import dataclass

from ..errors import ConflictError, DuplicateRunError, ForbiddenError, InputError, RequestError
from ..model import utcnow
from ..store import Store
from ..store.submissions import AlreadySubmitted, Submission, find_submission, recorder

#: The canonical formats (a version and machine on every line) and the line-oriented tools' formats.
CANONICAL = ("jsonl", "csv")
_TEXT_FORMATS = {"go", "cargo-bench"}
#: Formats whose results are a folder, not one file: they cannot be one request body.
_FOLDER_FORMATS = {"criterion"}
SUBMISSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:\-]{7,127}$")
NAME_TEXT = re.compile(r"^[\w.\-+/~^@:]{1,200}$")


@dataclass(frozen=True)
class SubmitRequest:
    """What a submission says about its body (the query of ``POST /api/v1/runs``)."""

    submission_id: str
    format: str
    machine: str
    version: str | None = None
    config: str = "default"


@dataclass(frozen=True)
class SubmitResult:
    """The answer to a submission: what it stored (or had stored, when ``replayed``).

    ``skipped`` counts the runs of a canonical body already in the store (not stored again) and
    ``remeasured`` those of its runs stored after the runs the store had of their experiment (a
    re-run of a stored version, numbered from 0 again), both of this request: 0 in a replay.
    """

    submission_id: str
    runs: int
    samples: int
    replayed: bool
    skipped: int = 0
    remeasured: int = 0


def submit_formats() -> list[str]:
    """The format names a submission may give."""
    from ..adapters.base import available_formats

    return [*CANONICAL, *(f for f in available_formats() if f not in _FOLDER_FORMATS)]


def body_digest(request: SubmitRequest, body: bytes) -> str:
    """The SHA-256 of what a submission says and sends: a retry has the same one."""
    h = hashlib.sha256()
    for part in (request.format, request.version or "", request.machine, request.config):
        h.update(part.encode() + b"\0")
    h.update(body)
    return h.hexdigest()


def check_request(request: SubmitRequest, *, bound_machine: str | None, token_name: str) -> None:
    """Validate the query of a submission and the token's machine binding.

    Raises
    ------
    RequestError
        A malformed id, an unknown format, a missing version, a name with characters it cannot have.
    ForbiddenError
        The token is bound to another machine than the submission's.
    """
    if not SUBMISSION_ID.match(request.submission_id):
        raise RequestError(f"query parameter `submission` = {request.submission_id[:60]!r} is not a submission id "
                           "(8-128 letters, digits and . _ : -, starting with a letter or digit)")
    formats = submit_formats()
    if request.format not in formats:
        raise RequestError(f"query parameter `format` = {request.format[:40]!r} is not a known format "
                           f"({', '.join(formats)})")
    for name, value in (("machine", request.machine), ("config", request.config), ("version", request.version)):
        if value is not None and not NAME_TEXT.match(value):
            raise RequestError(f"query parameter `{name}` = {value[:60]!r} is not a name (1-200 letters, digits "
                               "and . - + / ~ ^ @ : _)")
    if request.format not in CANONICAL and not request.version:
        raise RequestError(f"query parameter `version` is missing: a {request.format} file does not say which "
                           "version it measured")
    if bound_machine is not None and bound_machine != request.machine:
        raise ForbiddenError(f"token {token_name!r} is bound to machine {bound_machine!r} and cannot submit as "
                             f"machine {request.machine!r}")


def submit(store: Store, request: SubmitRequest, body: bytes, *, token_id: int | None = None) -> SubmitResult:
    """Store the runs of one submission once (see the module's docstring).

    Parameters
    ----------
    store : Store
        Where the runs go.
    request : SubmitRequest
        The submission's id, format, machine, version and configuration (already checked by
        :func:`check_request`).
    body : bytes
        The file, as the harness wrote it.
    token_id : int, optional
        The id of the token that sent it, recorded with it.

    Returns
    -------
    SubmitResult
        The runs and samples stored, or (``replayed``) those stored by the first submission with
        this id.

    Raises
    ------
    InputError
        The body is malformed (``body:LINE: what``), or names another machine or version than the query.
    ConflictError
        The id was used for another body, or another writer stored runs under the numbers the
        body's runs were given while they were being stored.
    """
    digest = body_digest(request, body)
    found = find_submission(store, request.submission_id)
    if found is not None:
        return _replay(found, digest)
    suffix = ".jsonl" if request.format == "jsonl" else ".csv" if request.format == "csv" else \
        ".txt" if request.format in _TEXT_FORMATS else ".json"
    # A named file, not a folder: the adapters read paths, and removing a temporary folder costs
    # milliseconds on some file systems (a fifth of a submission's time), unlinking a file does not.
    with tempfile.NamedTemporaryFile(prefix="regbench-submit-", suffix=suffix) as spool:
        spool.write(body)
        spool.flush()
        try:
            return _store(store, request, spool.name, digest, token_id)
        except AlreadySubmitted as exc:
            return _replay(exc.submission, digest)
        except DuplicateRunError as exc:
            # A concurrent retry of the same submission stored its runs first (its id is now
            # recorded), or another submission had stored these runs.
            found = find_submission(store, request.submission_id)
            if found is not None:
                return _replay(found, digest)
            raise ConflictError(f"the body's runs are already stored by another submission: {exc}") from exc
        except InputError as exc:
            found = find_submission(store, request.submission_id)  # a concurrent retry stored it first
            if found is not None:
                return _replay(found, digest)
            where = f"body:{exc.line}: " if exc.line is not None else "body: "
            raise InputError(where + exc.reason) from exc


def _store(store: Store, request: SubmitRequest, path: str, digest: str, token_id: int | None) -> SubmitResult:
    from ..ingest import import_tool_file, parse_tool_file, plan_import, store_import

    def record(runs: int, samples: int):
        return recorder(Submission(request.submission_id, digest, request.format, request.machine, runs, samples,
                                   utcnow(), token_id))

    if request.format in CANONICAL:
        from ..adapters import parse_file

        batch = parse_file(path, fmt=request.format)
        for rec in batch.records:
            line = batch.first_line.get((rec.benchmark, rec.version, rec.config, rec.machine, rec.run_index))
            if rec.machine != request.machine:
                raise InputError(f"the line is of machine {rec.machine!r}, the submission's machine is "
                                 f"{request.machine!r}", path=path, line=line)
            if request.version is not None and rec.version != request.version:
                raise InputError(f"the line is of version {rec.version!r}, the submission's version is "
                                 f"{request.version!r}", path=path, line=line)
        plan = plan_import(store, path, batch)  # runs already stored are skipped, re-runs go after them
        report = store_import(store, plan, within=record(plan.runs, plan.samples))
    else:
        runs = parse_tool_file(path, fmt=request.format, version=request.version)
        # Recorded with the runs stored, the failed benchmarks' among them: a replay answers so.
        report = import_tool_file(store, path, fmt=request.format, version=request.version, config=request.config,
                                  machine=request.machine, runs=runs, within_counts=record)
    return SubmitResult(request.submission_id, report.runs, report.samples, replayed=False, skipped=report.skipped,
                        remeasured=sum(r.runs for r in report.remeasured))


def _replay(found: Submission, digest: str) -> SubmitResult:
    if found.body_sha256 != digest:
        raise ConflictError(f"submission id {found.submission_id!r} was used for another body (or another format, "
                            "version, machine or configuration): give a new id")
    return SubmitResult(found.submission_id, found.runs, found.samples, replayed=True)
