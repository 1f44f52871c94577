"""Doctor's views over a hand-built report: the JSON body (schema_version added once, by output), the human
checklist and Markdown."""

from __future__ import annotations

import json

from envguard.doctor import render
from envguard.doctor.records import DoctorFacts, DoctorReport
from envguard.findings import Finding
from envguard.machine.disk import DiskInfo
from envguard.machine.gpu import NvmlReport
from envguard.machine.host import CpuInfo, MemoryInfo, ShmInfo
from envguard.output import render as present_as

FACTS = DoctorFacts(
    environment="/env",
    cpus=CpuInfo(logical=8, affinity=8, physical=4, quota=None, usable=8),
    memory=MemoryInfo(total=2**34, available=2**33, cgroup_limit=None),
    shm=ShmInfo(path="/dev/shm", exists=True, total=2**30, free=2**30),
    open_files=(65536, None),
    nvml=NvmlReport(available=False, reason="no driver"),
    disk=DiskInfo("/data", "/data", "nfs4", "server:/data", None, 10, 2**20, False),
)
REPORT = DoctorReport(
    FACTS, 7, (Finding("data", "data folder", "WARN", "/data on nfs4", "copy the data to local disk"),)
)


def test_json_body_spells_out_the_disk_and_gets_one_schema_version() -> None:
    body = render.to_dict(REPORT)
    assert "schema_version" not in body
    assert body["facts"]["disk"]["network"] is True and body["facts"]["disk"]["in_memory"] is False
    document = json.loads(present_as(render.views(REPORT), "json"))
    assert list(document)[:4] == ["schema_version", "facts", "recommended_workers", "findings"]
    assert document["findings"][0]["fix"] == "copy the data to local disk"


def test_human_and_markdown_views() -> None:
    text = render.human(REPORT)
    assert text.startswith(
        "envguard doctor: /env; 8 usable CPUs, 0 GPU(s); num_workers at most 7 for loading that computes"
    )
    assert "doctor: WARN (1 WARN)" in text
    assert render.markdown(REPORT).startswith("| Status | Category | Check | Evidence | What to do |")
