"""What a remote root holds about its index versions: the ``current`` pointer and each version's file list.

Layout under the remote root (``s3://bucket/prefix`` or ``file:///abs/path``)::

    current                      {"version": "v…"}: written last, after every file of that version
    versions/<version>/<file>    every file of the version, as its manifest lists them, and manifest.json
    versions/<version>/files.json  name → size and SHA-256 of every file above, written after them

A reader that follows ``current`` therefore always finds a complete version with its file list, and
checks every byte it downloads against that list.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from pydantic import BaseModel, Field, field_validator

CURRENT_KEY = "current"
VERSIONS = "versions"
FILE_LIST = "files.json"


def version_key(version: str, name: str = "") -> str:
    """The key of ``name`` (a path relative to the version folder) under the remote root."""
    return f"{VERSIONS}/{version}/{name}" if name else f"{VERSIONS}/{version}"


def _checked_version(value: str) -> str:
    """A version name is one plain path part: a remote pointer must not lead a sync out of its folder."""
    if not value or "/" in value or "\\" in value or value.startswith("."):
        raise ValueError(f"{value!r} is not an index version name (e.g. v20260101T000000000000Z)")
    return value


class RemotePointer(BaseModel):
    """The ``current`` object: which version readers should sync."""

    version: str

    @field_validator("version")
    @classmethod
    def _version(cls, value: str) -> str:
        return _checked_version(value)


class RemoteFile(BaseModel):
    size: int = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class RemoteFileList(BaseModel):
    """Every file of one uploaded version (relative path → size and SHA-256)."""

    version: str
    files: dict[str, RemoteFile]

    @field_validator("version")
    @classmethod
    def _version(cls, value: str) -> str:
        return _checked_version(value)

    @field_validator("files")
    @classmethod
    def _relative_names(cls, files: dict[str, RemoteFile]) -> dict[str, RemoteFile]:
        """Names stay inside the version folder: no absolute paths, no '..' (a tampered list cannot make a
        sync write elsewhere)."""
        for name in files:
            path = PurePosixPath(name)
            if path.is_absolute() or ".." in path.parts or not path.parts:
                raise ValueError(f"{name!r} is not a path inside a version folder")
        return files

    @property
    def bytes(self) -> int:
        return sum(f.size for f in self.files.values())
