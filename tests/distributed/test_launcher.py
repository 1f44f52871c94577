"""Finding the launcher from the environment variables alone: torchrun, Slurm, Open MPI, PMI; which wins when
several are set; the rendezvous each gives (MASTER_ADDR, the node list's first host, this host; MASTER_PORT, a
port from the job id, torch's default); one line for a missing launcher or a malformed variable."""

from __future__ import annotations

import pytest

from envguard.distributed.launcher import DEFAULT_PORT, NO_LAUNCHER, Launch, detect
from envguard.errors import BadInputError, UsageError

SLURM = {
    "SLURM_PROCID": "5",
    "SLURM_NTASKS": "16",
    "SLURM_LOCALID": "1",
    "SLURM_JOB_ID": "1234567",
    "SLURM_JOB_NODELIST": "gpu-a[007-008,012],gpu-b003",
}


def test_torchrun() -> None:
    found = detect(
        {
            "RANK": "3",
            "WORLD_SIZE": "4",
            "LOCAL_RANK": "1",
            "MASTER_ADDR": "10.0.0.1",
            "MASTER_PORT": "29400",
            "TORCHELASTIC_RUN_ID": "none",
            "TORCHELASTIC_USE_AGENT_STORE": "True",
            "TORCHELASTIC_RESTART_COUNT": "2",
            **SLURM,  # `srun torchrun ...`: torchrun's own ranks win
        }
    )
    assert found == Launch(
        "torchrun", 3, 4, 1, "10.0.0.1", 29400, "MASTER_ADDR, MASTER_PORT", agent_store=True, attempt="2"
    )
    assert found.rendezvous == "10.0.0.1:29400"
    plain = detect({"RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "::1", "MASTER_PORT": "1"})
    assert plain.launcher == "RANK/WORLD_SIZE" and not plain.agent_store and plain.local_rank is None
    assert plain.rendezvous == "[::1]:1"


def test_slurm_rank_world_local_rank_and_the_first_host() -> None:
    found = detect(SLURM)
    assert (found.launcher, found.rank, found.world_size, found.local_rank) == ("Slurm", 5, 16, 1)
    assert found.host == "gpu-a007"
    assert found.port == 25000 + 1234567 % 4000 == 27567
    assert found.origin == "first host of SLURM_JOB_NODELIST, port 27567 from SLURM_JOB_ID 1234567"


def test_slurm_step_node_list_master_addr_and_master_port_win() -> None:
    step = detect({**SLURM, "SLURM_STEP_NODELIST": "gpu-c[10-11]"})
    assert step.host == "gpu-c10" and "SLURM_STEP_NODELIST" in step.origin
    given = detect({**SLURM, "MASTER_ADDR": "head", "MASTER_PORT": "31000"})
    assert (given.host, given.port, given.origin) == ("head", 31000, "MASTER_ADDR, MASTER_PORT")
    no_job = detect({k: v for k, v in SLURM.items() if k != "SLURM_JOB_ID"})
    assert no_job.port == DEFAULT_PORT and "torch's default port" in no_job.origin


def test_open_mpi_wins_over_the_slurm_variables_its_daemons_inherit() -> None:
    found = detect(
        {
            **SLURM,
            "SLURM_PROCID": "1",  # the node index of mpirun's daemon, not the rank
            "OMPI_COMM_WORLD_RANK": "9",
            "OMPI_COMM_WORLD_SIZE": "32",
            "OMPI_COMM_WORLD_LOCAL_RANK": "1",
        }
    )
    assert (found.launcher, found.rank, found.world_size, found.local_rank) == ("Open MPI", 9, 32, 1)
    assert found.host == "gpu-a007"


def test_mpi_on_one_host_and_pmi() -> None:
    local = detect(
        {
            "OMPI_COMM_WORLD_RANK": "0",
            "OMPI_COMM_WORLD_SIZE": "4",
            "OMPI_COMM_WORLD_LOCAL_SIZE": "4",
        }
    )
    assert local.host == "127.0.0.1" and local.port == DEFAULT_PORT and local.local_rank is None
    pmi = detect(
        {"PMI_RANK": "2", "PMI_SIZE": "3", "MPI_LOCALRANKID": "0", "MASTER_ADDR": "n1", "MASTER_PORT": "4000"}
    )
    assert (pmi.launcher, pmi.rank, pmi.world_size, pmi.local_rank, pmi.host) == ("PMI", 2, 3, 0, "n1")


def test_no_launcher_is_one_line_naming_them_all() -> None:
    with pytest.raises(UsageError) as raised:
        detect({"PATH": "/usr/bin", "SLURM_JOB_ID": "7"})  # inside an allocation, but not under srun
    assert str(raised.value) == NO_LAUNCHER and "\n" not in NO_LAUNCHER
    for name in ("torchrun", "srun", "mpirun", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"):
        assert name in NO_LAUNCHER


@pytest.mark.parametrize(
    ("environ", "named"),
    [
        ({"SLURM_PROCID": "0"}, "SLURM_NTASKS is not set"),
        ({**SLURM, "SLURM_PROCID": "x"}, "SLURM_PROCID='x' is not an integer from 0 to 15"),
        ({**SLURM, "SLURM_PROCID": "16"}, "SLURM_PROCID='16'"),
        ({**SLURM, "SLURM_NTASKS": "0"}, "SLURM_NTASKS='0' is not an integer of at least 1"),
        ({**SLURM, "MASTER_PORT": "99999"}, "MASTER_PORT='99999' is not a TCP port"),
        ({**SLURM, "SLURM_JOB_NODELIST": "gpu[1-"}, "hostlist 'gpu[1-'"),
        ({"RANK": "0", "WORLD_SIZE": "2"}, "MASTER_ADDR is not"),
        ({"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h"}, "MASTER_PORT=''"),
        ({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2"}, "set MASTER_ADDR"),
    ],
)
def test_malformed_or_missing_variables_are_bad_input(environ: dict[str, str], named: str) -> None:
    with pytest.raises(BadInputError) as raised:
        detect(environ)
    assert not isinstance(raised.value, UsageError) and named in str(raised.value)
