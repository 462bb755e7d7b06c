"""A tiny in-tree PEP 517 build backend (standard library only).

It lets ``pip install ./clients/python`` work offline on a bare Python: no setuptools or wheel
has to be installed or downloaded (pyproject.toml's ``requires`` is empty). It builds a pure-Python
wheel of the ``pet_service`` package and a source archive. https://peps.python.org/pep-0517/
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "pet_service"


def _project() -> Dict[str, str]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    project = text.split("[project]", 1)[1].split("\n[", 1)[0]

    def value(key: str) -> str:
        match = re.search(rf'^{key}\s*=\s*"([^"]*)"', project, re.MULTILINE)
        if match is None:
            raise ValueError(f"pyproject.toml [project] has no {key}")
        return match.group(1)

    return {
        "name": value("name"),
        "version": value("version"),
        "description": value("description"),
        "requires-python": value("requires-python"),
    }


def _metadata() -> str:
    p = _project()
    readme = ROOT / "README.md"
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {p['name']}",
        f"Version: {p['version']}",
        f"Summary: {p['description']}",
        "License: MIT",
        f"Requires-Python: {p['requires-python']}",
        "Classifier: Programming Language :: Python :: 3",
        "Classifier: Typing :: Typed",
    ]
    if readme.exists():
        lines.append("Description-Content-Type: text/markdown")
        return "\n".join(lines) + "\n\n" + readme.read_text(encoding="utf-8")
    return "\n".join(lines) + "\n"


def _dist_name() -> str:
    p = _project()
    return f"{re.sub(r'[-_.]+', '_', p['name'])}-{p['version']}"


def _package_files() -> List[Path]:
    files = []
    for path in sorted((ROOT / PACKAGE).rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            files.append(path)
    return files


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _write_dist_info(directory: str) -> str:
    info = f"{_dist_name()}.dist-info"
    os.makedirs(os.path.join(directory, info), exist_ok=True)
    for name, text in _dist_info_files().items():
        with open(os.path.join(directory, info, name), "w", encoding="utf-8") as f:
            f.write(text)
    return info


def _dist_info_files() -> Dict[str, str]:
    return {
        "METADATA": _metadata(),
        "WHEEL": "Wheel-Version: 1.0\nGenerator: pet_service_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        "top_level.txt": f"{PACKAGE}\n",
    }


# --- PEP 517 hooks -----------------------------------------------------------------------


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[dict] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[dict] = None) -> str:
    return _write_dist_info(metadata_directory)


def prepare_metadata_for_build_editable(metadata_directory: str, config_settings: Optional[dict] = None) -> str:
    return _write_dist_info(metadata_directory)


def _build(wheel_directory: str, entries: List[Tuple[str, bytes]]) -> str:
    info = f"{_dist_name()}.dist-info"
    entries = entries + [(f"{info}/{name}", text.encode()) for name, text in _dist_info_files().items()]
    record = [_record_line(name, data) for name, data in entries] + [f"{info}/RECORD,,"]
    filename = f"{_dist_name()}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in entries:
            wheel.writestr(name, data)
        wheel.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return filename


def build_wheel(
    wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None
) -> str:
    entries = [(path.relative_to(ROOT).as_posix(), path.read_bytes()) for path in _package_files()]
    return _build(wheel_directory, entries)


def build_editable(
    wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None
) -> str:
    # PEP 660: a .pth file that puts the source folder on sys.path.
    return _build(wheel_directory, [(f"{PACKAGE}_editable.pth", f"{ROOT}\n".encode())])


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    base = _dist_name()
    filename = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as sdist:
        for path in [ROOT / "pyproject.toml", ROOT / "README.md", *_package_files(), *sorted((ROOT / "build_backend").glob("*.py"))]:
            if path.exists():
                sdist.add(path, arcname=f"{base}/{path.relative_to(ROOT).as_posix()}")
        pkg_info = _metadata().encode()
        tar_info = tarfile.TarInfo(f"{base}/PKG-INFO")
        tar_info.size = len(pkg_info)
        sdist.addfile(tar_info, io.BytesIO(pkg_info))
    return filename
