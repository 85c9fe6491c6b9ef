"""commits_between: an unknown commit is a VersionError, not "not an ancestor" (which is None)."""

from __future__ import annotations

import pytest

from regbench.errors import VersionError
from regbench.run.bisect import commits_between
from test_bisect_edges import make_repo


def test_an_unknown_commit_is_not_reported_as_a_non_ancestor(tmp_path):
    repo = tmp_path / "repo"
    shas = make_repo(repo, commits=3, culprit=99)
    unknown = "0123456789abcdef0123456789abcdef01234567"
    with pytest.raises(VersionError):
        commits_between(repo, unknown, shas[-1])
    assert commits_between(repo, shas[0], shas[-1]) == 2
    assert commits_between(repo, shas[-1], shas[0]) is None
