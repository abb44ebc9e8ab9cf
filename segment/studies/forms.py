"""Model forms: data plus a documented law, each with its source (``data/forms/``).

A form is what a calibration to specimen curves may change and how (issue 22):

* a **disc law** (``disc_law.csv``, read as by :func:`segment.load_parameters`; the laws are
  those of :mod:`segment.elements.disc`), applied to the base model; none keeps eq. (1);
* a **parameter space** (:class:`~segment.studies.space.ParameterSpace`) with each parameter's
  prior, range and source ("assumed" with the reasoning where no source gives it).

``data/forms/forms.csv`` lists the packaged forms (name, space, disc law, description, source;
paths relative to ``data/``)::

    published          eq. (1) and Table 4, the packaged space (today's ranges)
    reference-strain   eq. (1); rest lengths by a reference strain (Blankevoort and Huiskes)
                       and specimen factors on the flexion and extension stiffness
    neutral-zone       as reference-strain, with Panjabi's neutral zone on phi_y
    fw35               as reference-strain, with Fritzkowski and Walczak's eq. (35) on phi_y

The published model stays the default everywhere: a form is only used where it is named
(``--form NAME``, ``form=``). A folder with a ``space.csv`` (and optionally a
``disc_law.csv``) is a form too (:func:`load_form` with a path).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from segment.core.io import data_dir, read_disc_law, sha256_of
from segment.core.tables import Table
from segment.studies.space import ParameterSpace

__all__ = ["DEFAULT_FORM", "FORM_COLUMNS", "Form", "form_names", "forms_path", "load_form"]

FORM_COLUMNS = ("form", "space", "disc_law", "description")
DEFAULT_FORM = "published"
"""The form of the published model (no change of law, the packaged space)."""


def forms_path() -> Path:
    """The packaged list of forms, ``data/forms/forms.csv``."""
    return data_dir() / "forms" / "forms.csv"


@dataclass(frozen=True, eq=False)
class Form:
    """A model form: a disc law (or none) and a parameter space.

    Attributes
    ----------
    name, description, source : str
    space : ParameterSpace
    disc_law_path : Path or None
        The form's ``disc_law.csv`` (None: eq. (1), the published law).
    """

    name: str
    description: str
    source: str
    space: ParameterSpace
    disc_law_path: Path | None = None

    def model(self, base):
        """``base`` (a Segment) with the form's disc law (its nominal parameters); the base
        itself when the form has no law."""
        if self.disc_law_path is None:
            return base
        return base.replace(disc=read_disc_law(self.disc_law_path, base.disc, True))

    def files(self) -> tuple[Path, ...]:
        """The form's data files (space, disc law)."""
        return tuple(p for p in (Path(self.space.path), self.disc_law_path) if p is not None)

    def checksums(self) -> dict[str, str]:
        """sha256 of each of :meth:`files` by file name."""
        return {p.name if p.name != "space.csv" else f"{self.name}/space.csv":
                sha256_of(p) for p in self.files()}


@functools.lru_cache(maxsize=4)
def _registry(path: str) -> dict[str, tuple[str, str, str, str]]:
    t = Table(Path(path), FORM_COLUMNS, collect=True, what="forms")
    out: dict[str, tuple[str, str, str, str]] = {}
    base = Path(path).parent.parent          # data/
    for i, row in t.rows():
        name = row["form"]
        if not name:
            t.error(i, "form", "empty")
            continue
        if name in out:
            t.error(i, "form", f"duplicate form {name!r}")
            continue
        for col in ("space", "disc_law"):
            if row[col] and not (base / row[col]).is_file():
                t.error(i, col, f"no such file {row[col]!r} under {base.name}/")
        if not row["space"]:
            t.error(i, "space", "empty; every form names its parameter space")
        if t.ok(i):
            out[name] = (row["space"], row["disc_law"], row["description"], row["source"])
    t.finish()
    return out


def form_names() -> tuple[str, ...]:
    """The packaged forms, in the order of ``forms.csv``."""
    return tuple(_registry(str(forms_path())))


def load_form(form=None) -> Form:
    """A :class:`Form` from its name (``forms.csv``, or a packaged folder of ``forms/`` such as
    ``population``, the form the virtual population's members record), a folder
    (``space.csv`` and optionally ``disc_law.csv``), or a Form; None is :data:`DEFAULT_FORM`.

    Raises
    ------
    ValueError
        An unknown name (the known ones listed), a folder without ``space.csv``, or a bad
        table (the error of its reader).
    """
    if isinstance(form, Form):
        return form
    name = DEFAULT_FORM if form is None else str(form)
    registry = _registry(str(forms_path()))
    if name in registry:
        space, law, description, source = registry[name]
        base = forms_path().parent.parent
        return Form(name=name, description=description, source=source,
                    space=ParameterSpace.from_csv(base / space),
                    disc_law_path=(base / law) if law else None)
    folder = Path(name)
    packaged = forms_path().parent / name
    if not folder.is_dir() and name.isidentifier() and (packaged / "space.csv").is_file():
        folder = packaged     # a packaged form folder outside forms.csv (forms/population/)
    if folder.is_dir():
        if not (folder / "space.csv").is_file():
            raise ValueError(f"{folder}: a form folder needs a space.csv (and optionally a "
                             "disc_law.csv)")
        law = folder / "disc_law.csv"
        return Form(name=folder.name, description=f"the form of folder {folder.name}",
                    source="user", space=ParameterSpace.from_csv(folder / "space.csv"),
                    disc_law_path=law if law.is_file() else None)
    raise ValueError(f"unknown form {name!r}; expected one of {', '.join(registry)} or a "
                     "folder with a space.csv")
