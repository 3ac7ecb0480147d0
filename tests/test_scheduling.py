"""`make test`'s unit of work under xdist: a module, or the whole browser package."""

from tests.conftest import ModuleScheduling


def split(nodeid: str) -> str:
    # _split_scope reads only the node id; the scheduler's other state is not needed.
    return ModuleScheduling._split_scope(None, nodeid)  # type: ignore[arg-type]


def test_a_module_s_tests_are_one_unit_whatever_their_class_or_parameters():
    units = {
        split("tests/blog/test_search.py::test_one"),
        split("tests/blog/test_search.py::TestFusion::test_two"),
        split("tests/blog/test_search.py::test_three[zh-@x]"),
    }
    assert units == {"tests/blog/test_search.py"}


def test_every_browser_test_is_in_one_unit_and_no_other_test_is():
    assert split("tests/e2e/test_walk.py::test_a") == split("tests/e2e/test_first_run.py::test_b")
    assert split("tests/e2e/test_walk.py::test_a") != split("tests/blog/test_search.py::test_a")
    assert split("tests/agent/test_e2e_helpers.py::test_a") == "tests/agent/test_e2e_helpers.py"
