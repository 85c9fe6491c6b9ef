"""Tiny asv benchmarks for regbench's golden files (see ../../make_golden.sh)."""


def time_sum_range():
    sum(range(200))


class TimeSorted:
    params = ([10, 1000], ["list", "tuple"])
    param_names = ["n", "kind"]

    def setup(self, n, kind):
        self.data = list(range(n, 0, -1)) if kind == "list" else tuple(range(n, 0, -1))

    def time_sorted(self, n, kind):
        sorted(self.data)


def track_answer():
    return 42


track_answer.unit = "answers"


def mem_list():
    return [0] * 1000
