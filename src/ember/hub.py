"""Models and weights from elsewhere: ``load`` runs an entry point of a repository's ``hubconf.py`` (a local
directory, or a GitHub repository downloaded once into the hub's cache), ``load_state_dict_from_url`` downloads
a checkpoint once and loads it.

The cache is ``get_dir()``: ``$EMBER_HOME/hub``, where ``EMBER_HOME`` defaults to ``$XDG_CACHE_HOME/ember``
(``~/.cache/ember``).

>>> import os, tempfile, ember
>>> repo = tempfile.mkdtemp()
>>> with open(os.path.join(repo, "hubconf.py"), "w") as f:
...     _ = f.write("import ember\\ndef tiny(width=2):\\n    return ember.nn.Linear(width, 1)\\n")
>>> ember.hub.load(repo, "tiny", width=3, source="local")
Linear(in_features=3, out_features=1, bias=True)
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import uuid
import zipfile
from pathlib import Path
from urllib.parse import urlparse

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")  # a checkpoint named name-<sha256 prefix>.ext
MODULE_HUBCONF = "hubconf.py"
VAR_DEPENDENCY = "dependencies"
READ_DATA_CHUNK = 128 * 1024
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")  # as torch trusts them
_GITHUB = "https://github.com"  # (the sites the hub reads; tests point them at a local server)
_GITHUB_API = "https://api.github.com"
_hub_dir: str | None = None


def get_dir() -> str:
    """The hub's cache: what ``set_dir`` set, else ``$EMBER_HOME/hub``."""
    if _hub_dir is not None:
        return _hub_dir
    home = os.getenv("EMBER_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"), "ember"))
    return os.path.join(os.path.expanduser(home), "hub")


def set_dir(d: str | os.PathLike) -> None:
    """Keep the hub's downloads in ``d`` from now on."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def _progress(total: int | None, enabled: bool):
    """A progress bar on stderr (tqdm's, if installed), or nothing."""
    try:
        from tqdm import tqdm
    except ImportError:
        enabled = False
    if not enabled:
        return contextlib.nullcontext(None)
    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024)


def download_url_to_file(url: str, dst: str, hash_prefix: str | None = None, progress: bool = True) -> None:
    """Download ``url`` to the file ``dst``, through a temporary file beside it (so ``dst`` is whole or
    absent); with ``hash_prefix``, the content's SHA-256 must start with it."""
    from urllib.request import Request, urlopen  # (on first use: it costs ember's import 50 ms)

    dst = os.path.expanduser(dst)
    partial = f"{dst}.{uuid.uuid4().hex}.partial"
    digest = hashlib.sha256()
    try:
        with urlopen(Request(url, headers={"User-Agent": "ember.hub"})) as response, open(partial, "xb") as out:
            length = response.headers.get("Content-Length")
            with _progress(int(length) if length else None, progress) as bar:
                while chunk := response.read(READ_DATA_CHUNK):
                    out.write(chunk)
                    digest.update(chunk)
                    if bar is not None:
                        bar.update(len(chunk))
        if hash_prefix is not None and not digest.hexdigest().startswith(hash_prefix):
            raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest.hexdigest()}")')
        shutil.move(partial, dst)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def _single_file_zip(path: str) -> bool:
    """Whether ``path`` is a zip of one file (checkpoints zipped by hand before torch 1.6's format)."""
    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as archive:
        members = archive.infolist()
    return len(members) == 1 and not members[0].is_dir()


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location=None, progress: bool = True,
                             check_hash: bool = False, file_name: str | None = None,
                             weights_only: bool | None = None):
    """The object saved at ``url``, downloaded once into ``model_dir`` (``<get_dir()>/checkpoints``) and
    loaded from there. With ``check_hash``, the file's name must hold the start of its SHA-256 after a dash
    (``resnet18-5c106cde.pth``). A zip of one checkpoint is unzipped first.

    Unlike torch's (whose default is ``weights_only=False``), a download is loaded weights-only unless
    ``weights_only=False`` is passed: a file from the network never runs code here by default.
    """
    model_dir = model_dir if model_dir is not None else os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    name = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached = os.path.join(model_dir, name)
    if not os.path.exists(cached):
        sys.stdout.write(f'Downloading: "{url}" to {cached}\n')
        match = HASH_REGEX.search(name) if check_hash else None
        download_url_to_file(url, cached, match.group(1) if match else None, progress=progress)
    if _single_file_zip(cached):
        with zipfile.ZipFile(cached) as archive:
            _safe_extract(archive, model_dir)
            cached = os.path.join(model_dir, archive.infolist()[0].filename)
    import ember

    return ember.load(cached, map_location=map_location, weights_only=True if weights_only is None else weights_only)


def _safe_extract(archive: zipfile.ZipFile, into: str) -> None:
    """Extract ``archive`` into ``into``, refusing any entry that would land outside it."""
    root = Path(into).resolve()
    for member in archive.infolist():
        target = (root / member.filename).resolve()
        if os.path.isabs(member.filename) or not target.is_relative_to(root):
            raise ValueError(f"Archive entry escapes target directory: {member.filename}")
    archive.extractall(root)


# ---- repositories with a hubconf.py

def _import_hubconf(repo_dir: str):
    """The repository's ``hubconf.py`` as a module, imported with the repository on ``sys.path``."""
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"ember.hub: no {MODULE_HUBCONF} in {repo_dir}; a hub repository defines its "
                                "entry points there")
    sys.path.insert(0, repo_dir)
    try:
        spec = importlib.util.spec_from_file_location(MODULE_HUBCONF, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(repo_dir)
    return module


def _entry(module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    missing = [name for name in getattr(module, VAR_DEPENDENCY, None) or () if importlib.util.find_spec(name) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    entry = getattr(module, model, None) if model in dir(module) else None
    if entry is None or not callable(entry):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return entry


def _repo_and_ref(github: str) -> tuple:
    """``owner/name[:ref]`` as (owner, name, ref); without a ref, 'main' if the repository has it, else
    'master' (offline: whichever the cache holds)."""
    from urllib.error import HTTPError, URLError
    from urllib.request import urlopen

    repo, _, ref = github.partition(":")
    if repo.count("/") != 1:
        raise ValueError(f"ember.hub: expected a GitHub repository as 'owner/name[:ref]', got {github!r}")
    owner, name = repo.split("/")
    if ref:
        return owner, name, ref
    try:
        with urlopen(f"{_GITHUB}/{owner}/{name}/tree/main/"):
            return owner, name, "main"
    except HTTPError as error:
        if error.code == 404:
            return owner, name, "master"
        raise
    except URLError as offline:
        for ref in ("main", "master"):
            if os.path.exists(os.path.join(get_dir(), f"{owner}_{name}_{ref}")):
                return owner, name, ref
        raise RuntimeError("It looks like there is no internet connection and the repo could not be found in the "
                           f"cache ({get_dir()})") from offline


def _check_trusted(owner: str, name: str, cached_name: str, trust_repo) -> None:
    """Ask before running code of a repository not trusted yet (``trust_repo='check'``, or always with False);
    a trusted one is remembered in ``<get_dir()>/trusted_list``."""
    trusted_list = os.path.join(get_dir(), "trusted_list")
    Path(trusted_list).touch()
    with open(trusted_list) as file:
        trusted = {line.strip() for line in file}
    owner_name = f"{owner}_{name}"
    is_trusted = owner_name in trusted or os.path.isdir(os.path.join(get_dir(), cached_name)) or \
        owner in _TRUSTED_REPO_OWNERS
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        answer = input(f"The repository {owner_name} does not belong to the list of trusted repositories and as "
                       "such cannot be downloaded. Do you trust this repository and wish to add it to the trusted "
                       "list of repositories (y/N)?").lower()
        if answer in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif answer in ("n", "no", ""):
            raise Exception("Untrusted repository.")
        else:
            raise ValueError(f"Unrecognized response {answer}.")
    if not is_trusted:
        with open(trusted_list, "a") as file:
            file.write(owner_name + "\n")


def _check_ref_exists(owner: str, name: str, ref: str) -> None:
    """That ``ref`` is a branch, tag or commit of the repository itself (not of a fork)."""
    from urllib.request import Request, urlopen

    headers = {"Accept": "application/vnd.github.v3+json"}
    if os.environ.get("GITHUB_TOKEN"):
        headers["Authorization"] = f"token {os.environ['GITHUB_TOKEN']}"
    for kind in ("branches", "tags"):
        page = 1
        while True:
            with urlopen(Request(f"{_GITHUB_API}/repos/{owner}/{name}/{kind}?per_page=100&page={page}",
                                 headers=headers)) as response:
                listed = json.loads(response.read().decode("utf-8"))
            if not listed:
                break
            if any(item["name"] == ref or item["commit"]["sha"].startswith(ref) for item in listed):
                return
            page += 1
    raise ValueError(f"Cannot find {ref} in {_GITHUB}/{owner}/{name}. If it's a commit from a forked repo, please "
                     "call hub.load() with forked repo directly.")


def _cached_repo(github: str, force_reload: bool, trust_repo, verbose: bool, skip_validation: bool) -> str:
    """The repository's directory in the cache, downloaded (as GitHub's zip of the ref) if not there yet."""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = _repo_and_ref(github)
    cached_name = f"{owner}_{name}_{ref.replace('/', '_')}"
    repo_dir = os.path.join(hub_dir, cached_name)
    _check_trusted(owner, name, cached_name, trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    if not skip_validation:
        _check_ref_exists(owner, name, ref)
    archive_path = os.path.join(hub_dir, ref.replace("/", "_") + ".zip")
    url = f"{_GITHUB}/{owner}/{name}/zipball/{ref}"
    sys.stdout.write(f'Downloading: "{url}" to {archive_path}\n')
    download_url_to_file(url, archive_path, progress=False)
    try:
        with zipfile.ZipFile(archive_path) as archive:
            top = os.path.join(hub_dir, archive.infolist()[0].filename.split("/")[0])  # GitHub's one folder
            shutil.rmtree(top, ignore_errors=True)
            _safe_extract(archive, hub_dir)
    finally:
        os.remove(archive_path)
    shutil.rmtree(repo_dir, ignore_errors=True)
    shutil.move(top, repo_dir)
    return repo_dir


def list(github: str, force_reload: bool = False, skip_validation: bool = False, trust_repo="check",
         verbose: bool = True) -> "list[str]":
    """The entry points (public callables) of a GitHub repository's ``hubconf.py``."""
    module = _import_hubconf(_cached_repo(github, force_reload, trust_repo, verbose, skip_validation))
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(github: str, model: str, force_reload: bool = False, skip_validation: bool = False,
         trust_repo="check") -> str | None:
    """The docstring of an entry point of a GitHub repository's ``hubconf.py``."""
    module = _import_hubconf(_cached_repo(github, force_reload, trust_repo, True, skip_validation))
    return _entry(module, model).__doc__


def load(repo_or_dir: str, model: str, *args, source: str = "github", trust_repo="check", force_reload: bool = False,
         verbose: bool = True, skip_validation: bool = False, **kwargs):
    """What the entry point ``model`` of a repository's ``hubconf.py`` returns for ``*args, **kwargs``: from a
    GitHub repository ``owner/name[:ref]`` (``source='github'``) or a local directory (``source='local'``)."""
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _cached_repo(repo_or_dir, force_reload, trust_repo, verbose, skip_validation)
    sys.path.insert(0, repo_or_dir)
    try:  # (the entry point may import the repository's modules as it runs, as at import)
        return _entry(_import_hubconf(repo_or_dir), model)(*args, **kwargs)
    finally:
        sys.path.remove(repo_or_dir)

