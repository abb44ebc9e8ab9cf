"""The report's picture cache (segment/report/picture_cache.py): a key is a function of the
content alone, a changed picture gets another key, a damaged entry is drawn again, and a warm
build writes the bytes of a cold one."""

import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from segment.report.picture_cache import (
    CACHE_ENV,
    PictureCache,
    cache_root,
    figure_bytes,
)

FIGURE = textwrap.dedent("""
    import sys
    import hashlib
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from segment.report.picture_cache import figure_bytes
    fig, axs = plt.subplots(1, 2)
    axs[0].plot(np.arange(5.0), np.arange(5.0) ** 2, label="a")
    axs[0].legend()
    axs[1].bar([1, 2], [3, 4])
    axs[1].annotate("x", xy=(1, 1), xytext=(2, 2), arrowprops=dict(arrowstyle="->"))
    fig.colorbar(plt.cm.ScalarMappable(), ax=axs[1])
    axs[0].set_title(sys.argv[1])
    print(hashlib.sha256(figure_bytes(fig)).hexdigest())
""")


def _figure_digest(title: str) -> str:
    run = subprocess.run([sys.executable, "-c", FIGURE, title], capture_output=True,
                         text=True, check=True)
    return run.stdout.strip()


def test_a_figure_has_the_same_bytes_in_every_process_and_others_when_it_changes():
    # matplotlib's own pickle keys transform parents by id(): it differs between processes
    a, b = _figure_digest("flexion"), _figure_digest("flexion")
    assert a == b
    assert _figure_digest("extension") != a


def test_a_figure_from_its_bytes_draws_the_picture_of_the_figure():
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [0, 1, 4], label="q")
    ax.legend()
    ax.set_title("a title")
    data = figure_bytes(fig)
    direct = io.BytesIO()
    fig.savefig(direct, format="png", dpi=60)
    plt.close(fig)
    again = io.BytesIO()
    pickle.loads(data).savefig(again, format="png", dpi=60)
    assert again.getvalue() == direct.getvalue()


PNG = b"\x89PNG\r\n\x1a\n" + b"body" + b"IEND\xaeB`\x82"


def test_entries_are_read_back_damaged_ones_drawn_again(tmp_path):
    cache = PictureCache(tmp_path)
    key = cache.key("figure", b"content")
    assert cache.key("figure", b"content") == key
    assert cache.key("figure", b"content2") != key
    assert cache.key("render", b"content") != key
    assert cache.get(key) is None and cache.misses == 1
    drawn = []
    assert cache.cached(key, lambda: drawn.append(1) or PNG) == PNG
    assert cache.cached(key, lambda: drawn.append(1) or PNG) == PNG
    assert drawn == [1] and cache.hits == 1
    (tmp_path / f"{key}.png").write_bytes(PNG[:-3])          # a truncated picture
    assert cache.get(key) is None
    assert cache.cached(key, lambda: PNG) == PNG


def test_the_key_parts_cannot_run_into_each_other():
    cache = PictureCache(None)
    assert cache.key("figure", b"ab", b"c") != cache.key("figure", b"a", b"bc")


def test_no_cache_keeps_nothing(tmp_path):
    cache = PictureCache(None)
    key = cache.key("figure", b"x")
    cache.put(key, PNG)
    assert cache.get(key) is None
    cache.prune()


def test_prune_keeps_the_most_recently_used(tmp_path):
    cache = PictureCache(tmp_path, max_entries=2)
    keys = [cache.key("figure", bytes([k])) for k in range(4)]
    for n, key in enumerate(keys):
        cache.put(key, PNG)
        os.utime(tmp_path / f"{key}.png", ns=(n * 10**9, n * 10**9))
    assert cache.get(keys[0]) == PNG                        # used now: the most recent
    cache.prune()
    assert sorted(p.stem for p in tmp_path.glob("*.png")) == sorted([keys[0], keys[3]])


def test_prune_removes_old_temporary_files_and_never_raises(tmp_path):
    cache = PictureCache(tmp_path)
    old, new = tmp_path / ".abc.1.tmp", tmp_path / ".abc.2.tmp"
    old.write_bytes(b"x")
    new.write_bytes(b"x")
    os.utime(old, (1e9, 1e9))
    (tmp_path / "holiday.png").write_bytes(PNG)          # not an entry: never counted
    cache.prune()
    assert not old.exists() and new.exists() and (tmp_path / "holiday.png").exists()
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    PictureCache(blocker).prune()                        # a file, not a folder
    PictureCache(tmp_path / ("a" * 300)).prune()         # a name too long for the system


def test_an_unwritable_cache_folder_is_skipped(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    cache = PictureCache(blocker / "pictures")
    assert cache.cached(cache.key("figure", b"x"), lambda: PNG) == PNG


def test_the_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "p"))
    assert cache_root() == tmp_path / "p"
    monkeypatch.setenv(CACHE_ENV, "off")
    assert cache_root() is None
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "segment" / "report-pictures"
    monkeypatch.delenv("XDG_CACHE_HOME")

    def no_home():
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert cache_root() is None


@pytest.mark.slow
def test_a_warm_report_reads_every_picture_and_writes_the_bytes_of_the_cold_one(
        main_job, tmp_path):
    """The main job drew every picture into an empty cache (conftest.main_job); the same job
    again reads them all and writes the same files."""
    from conftest import other_cpu_env

    assert main_job.returncode == 0, main_job.stderr
    out = tmp_path / "warm"
    run = subprocess.run([sys.executable, "-m", "segment", "-q", "validate", "--out", str(out)],
                         cwd=main_job.clone, capture_output=True, text=True, check=False,
                         env={**other_cpu_env(), CACHE_ENV: str(main_job.pictures)})
    assert run.returncode == 0, run.stderr
    cold = main_job.report
    names = sorted(p.relative_to(cold) for p in cold.rglob("*") if p.is_file()
                   and p.name != "run.json")
    assert names == sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file()
                           and p.name != "run.json")
    for name in names:
        assert (out / name).read_bytes() == (cold / name).read_bytes(), name
    pictures = json.loads((out / "run.json").read_text())["pictures"]
    figures = len(list((cold / "figures").glob("*.png")))
    assert pictures["read"] == figures and pictures["drawn"] == 0
    assert json.loads((cold / "run.json").read_text())["pictures"]["read"] == 0


def test_validate_without_the_cache_draws_everything(tmp_path, monkeypatch):
    """``--no-cache`` reads nothing (the option reaches the report builder)."""
    import segment.report
    from segment.cli import main

    seen = {}

    def record(out, **kwargs):
        seen.update(kwargs)

    monkeypatch.setattr(segment.report, "build_report", record)
    assert main(["-q", "validate", "--no-cache", "--out", str(tmp_path / "r")]) == 0
    assert seen["pictures"].root is None
    assert main(["-q", "validate", "--out", str(tmp_path / "r")]) == 0
    assert seen["pictures"] is None


@pytest.mark.parametrize("variable", ["GALLIUM_DRIVER", "DISPLAY"])
def test_a_render_key_holds_the_mesa_and_display_environment(monkeypatch, variable):
    """A Mesa driver variable, or a display (VTK then renders without OSMesa), changes the
    pixels VTK draws, so it changes the key."""
    from segment.report import picture_cache

    cache = PictureCache(None)
    monkeypatch.delenv(variable, raising=False)
    picture_cache._environment.cache_clear()
    plain = cache.key("render", b"results")
    monkeypatch.setenv(variable, "softpipe" if variable == "GALLIUM_DRIVER" else ":0")
    picture_cache._environment.cache_clear()
    assert cache.key("render", b"results") != plain
    assert cache.key("figure", b"results") == PictureCache(None).key("figure", b"results")
    picture_cache._environment.cache_clear()
