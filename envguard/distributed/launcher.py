"""Which launcher started this process, and what it says: rank, world size, local rank, the rendezvous (pure:
read from a mapping of environment variables).

Looked for in this order, the first found deciding:
- torchrun (or RANK/WORLD_SIZE set by hand): RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT;
- Open MPI's mpirun: OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE;
- MPICH/Intel MPI (PMI): PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS;
- Slurm's srun: SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID.
MPI comes before Slurm because mpirun inside an allocation starts its daemons with srun: the ranks inherit the
daemons' SLURM_PROCID (a node's index), and only the MPI variables say which rank is which.

Without torchrun the rendezvous (rank 0's host and a port) is MASTER_ADDR, else the first host of the step's
node list (SLURM_STEP_NODELIST, else SLURM_JOB_NODELIST: srun and mpirun place rank 0 on it), else this host
when every rank runs here; the port is MASTER_PORT, else derived from SLURM_JOB_ID (PORT_BASE + the id modulo
PORT_SPAN: below torch's 29500 and Linux's ephemeral ports, apart from Lightning's 15000 + id), else 29500.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from envguard.distributed.hostlist import first_host
from envguard.errors import BadInputError, UsageError

PORT_BASE, PORT_SPAN = 25000, 4000
DEFAULT_PORT = 29500  # torch's default MASTER_PORT
LOCALHOST = "127.0.0.1"
NODELISTS = ("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST")
NO_LAUNCHER = (
    "--distributed found no launcher: run one envguard per rank under torchrun "
    "(`torchrun --nproc-per-node=N -m envguard check --distributed`), Slurm (`srun envguard check "
    "--distributed`) or mpirun (Open MPI, MPICH); RANK/WORLD_SIZE, SLURM_PROCID/SLURM_NTASKS, "
    "OMPI_COMM_WORLD_RANK/_SIZE and PMI_RANK/PMI_SIZE are all unset"
)


@dataclass(frozen=True, slots=True)
class Launch:
    """What the launcher told this process. `origin` says where the rendezvous came from (for messages);
    `agent_store`: torchrun's agent already serves the rendezvous store, so rank 0 does not start one, and
    `attempt` (torchrun's restart count) keeps a restarted group's keys apart from the last attempt's."""

    launcher: str
    rank: int
    world_size: int
    local_rank: int | None
    host: str
    port: int
    origin: str
    agent_store: bool = False
    attempt: str = "0"

    @property
    def rendezvous(self) -> str:
        """`host:port`, an IPv6 address in brackets."""
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def detect(environ: Mapping[str, str]) -> Launch:
    """The launch this process is part of; UsageError when no launcher set its variables, BadInputError
    naming the variable when one is missing or malformed."""
    if "RANK" in environ or "WORLD_SIZE" in environ:
        return _torchrun(environ)
    for launcher, rank, size, local, local_size in (
        (
            "Open MPI",
            "OMPI_COMM_WORLD_RANK",
            "OMPI_COMM_WORLD_SIZE",
            "OMPI_COMM_WORLD_LOCAL_RANK",
            "OMPI_COMM_WORLD_LOCAL_SIZE",
        ),
        ("PMI", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
        ("Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", None),
    ):
        if rank in environ:
            return _launched(environ, launcher, rank, size, local, local_size)
    raise UsageError(NO_LAUNCHER)


def _torchrun(environ: Mapping[str, str]) -> Launch:
    world = _integer(environ, "WORLD_SIZE", minimum=1, hint="torchrun sets it; so must a hand-made launch")
    rank = _integer(environ, "RANK", minimum=0, below=world, hint="torchrun sets it")
    host = environ.get("MASTER_ADDR", "").strip()
    if not host:
        raise BadInputError(
            "RANK and WORLD_SIZE are set but MASTER_ADDR is not: start the ranks with torchrun, or set "
            "MASTER_ADDR and MASTER_PORT to rank 0's host and a free port"
        )
    port = _port(environ, "MASTER_PORT")
    return Launch(
        "torchrun" if "TORCHELASTIC_RUN_ID" in environ else "RANK/WORLD_SIZE",
        rank,
        world,
        _optional(environ, "LOCAL_RANK"),
        host,
        port,
        "MASTER_ADDR, MASTER_PORT",
        agent_store=environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True",
        attempt=environ.get("TORCHELASTIC_RESTART_COUNT", "0").strip() or "0",
    )


def _launched(
    environ: Mapping[str, str],
    launcher: str,
    rank_var: str,
    size_var: str,
    local_var: str,
    local_size: str | None,
) -> Launch:
    hint = "srun --ntasks N sets it" if launcher == "Slurm" else f"{launcher}'s launcher sets it"
    world = _integer(environ, size_var, minimum=1, hint=hint)
    rank = _integer(environ, rank_var, minimum=0, below=world, hint=hint)
    host, where = _rendezvous_host(environ, launcher, world, local_size)
    if "MASTER_PORT" in environ:
        port, origin = _port(environ, "MASTER_PORT"), f"{where}, MASTER_PORT"
    elif environ.get("SLURM_JOB_ID", "").strip().isdigit():
        job = environ["SLURM_JOB_ID"].strip()
        port = PORT_BASE + int(job) % PORT_SPAN
        origin = f"{where}, port {port} from SLURM_JOB_ID {job}"
    else:
        port, origin = DEFAULT_PORT, f"{where}, torch's default port {DEFAULT_PORT}"
    return Launch(launcher, rank, world, _optional(environ, local_var), host, port, origin)


def _rendezvous_host(
    environ: Mapping[str, str], launcher: str, world: int, local_size: str | None
) -> tuple[str, str]:
    """Rank 0's host and where it came from: MASTER_ADDR, the node list's first host, or this host."""
    if environ.get("MASTER_ADDR", "").strip():
        return environ["MASTER_ADDR"].strip(), "MASTER_ADDR"
    for variable in NODELISTS:
        if environ.get(variable, "").strip():
            return first_host(environ[variable]), f"first host of {variable}"
    if local_size is not None and environ.get(local_size, "").strip() == str(world):
        return LOCALHOST, f"every rank on this host ({local_size}={world})"
    raise BadInputError(
        f"{launcher} started this rank but nothing names rank 0's host: set MASTER_ADDR (and MASTER_PORT) "
        "for every rank, e.g. `mpirun -x MASTER_ADDR=$(hostname) -x MASTER_PORT=29500 ...`"
    )


INT_LIMIT = 1 << 31


def _integer(
    environ: Mapping[str, str], name: str, *, minimum: int, below: int | None = None, hint: str
) -> int:
    text = environ.get(name)
    if text is None:
        raise BadInputError(f"{name} is not set ({hint})")
    try:
        value = int(text.strip())
    except ValueError:
        value = None
    given = below
    below = INT_LIMIT if below is None else below  # torch's store and gloo count ranks in C ints
    if value is None or value < minimum or value >= below:
        bound = f"from {minimum} to {below - 1}" if given else f"of at least {minimum} (at most {below - 1})"
        raise BadInputError(f"{name}={text!r} is not an integer {bound} ({hint})")
    return value


def _optional(environ: Mapping[str, str], name: str) -> int | None:
    text = environ.get(name, "").strip()
    return int(text) if text.isascii() and text.isdigit() else None


def _port(environ: Mapping[str, str], name: str) -> int:
    text = environ.get(name, "").strip()
    if not (text.isascii() and text.isdigit()) or not 0 < int(text) < 65536:
        raise BadInputError(f"{name}={text!r} is not a TCP port (1-65535)")
    return int(text)
