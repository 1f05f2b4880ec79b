# SPDX-License-Identifier: MIT
"""`tierwise profile` MPI rank tagging: the rank from the launcher's
environment and the %r/%p/%% expansion of -o."""
import pytest

from tierwise.cli import UserError
from tierwise.commands.profile import expand_output, mpi_rank


def test_rank_first_set_variable_wins():
    assert mpi_rank({}) is None
    assert mpi_rank({"SLURM_PROCID": "3"}) == 3
    assert mpi_rank({"PMI_RANK": "1", "SLURM_PROCID": "3"}) == 1
    assert mpi_rank({"OMPI_COMM_WORLD_RANK": "0", "PMI_RANK": "5"}) == 0
    assert mpi_rank({"PMIX_RANK": "7", "OMPI_COMM_WORLD_RANK": ""}) == 7


def test_rank_not_a_number_is_a_user_error():
    with pytest.raises(UserError, match="PMI_RANK"):
        mpi_rank({"PMI_RANK": "x"})


def test_expand_output():
    assert expand_output("prof.%r.%p", 2, 4711) == "prof.2.4711"
    assert expand_output("a%%r/b", None, 1) == "a%r/b"
    assert expand_output("plain", None, 1) == "plain"
    with pytest.raises(UserError, match="%r needs an MPI rank"):
        expand_output("prof.%r", None, 1)
