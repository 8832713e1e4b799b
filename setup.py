"""setuptools hook (the project is described in pyproject.toml): a wheel records the source tree it
was built from and that tree's git commit in sbcore/install_info.json, so an installed scalebench
finds its kernels and config/ there and `scalebench --version` names the commit (sbcore/install.py)."""

import json
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


class BuildPyRecordingSource(build_py):
    def run(self):
        super().run()
        if self.editable_mode:  # an editable install runs from the tree itself
            return
        import sys

        sys.path.insert(0, str(HERE))
        from sbcore.install import git_commit

        info = {"source": str(HERE), "commit": git_commit(HERE) or "unknown"}
        target = Path(self.build_lib) / "sbcore" / "install_info.json"
        target.write_text(json.dumps(info) + "\n")


# build/ is the kernels' (build/bin, build/lib): setuptools builds under build/python instead.
setup(cmdclass={"build_py": BuildPyRecordingSource}, options={"build": {"build_base": "build/python"}})
