"""Loaders for the real datasets the papers use, in the formats their reference code reads
(``docs/methods/conventions.md#dataset-formats``).

Each ``load_*`` reads a user-given root and returns a list of :class:`Sample` (image paths are
loaded lazily; wrap the list in :class:`~paperlib.data.sample.SampleDataset` for a DataLoader).
A missing root, file or field raises an error naming it and the expected layout; every record
is read through :class:`~paperlib.data.records.Record` (types, non-empty texts, cumulative
prefixes, paths inside the root, unique ids). GRIT shards are
read with :func:`paperlib.data.webdataset.read_shards` (listed by :func:`~paperlib.data.webdataset.shard_urls`). HierarCaps and
HiMo-Docci have public URLs: :func:`fetch_hierarcaps` / :func:`fetch_himo_docci` download them
with sha256 verification.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.error import URLError
from urllib.request import urlopen

from paperlib.data.records import DatasetFormatError, Record, unique_ids
from paperlib.data.sample import Sample
from paperlib.untrusted import brief

HIERARCAPS_URL = (
    "https://raw.githubusercontent.com/TAU-VAILab/hierarcaps/main/data/hierarcaps_test.csv"
)
HIERARCAPS_SHA256 = "3474564194fd2a85e1d8f4dbe6e040c795e94677b2982cfb161b14908cae33b0"
HIMO_DOCCI_URL = (
    "https://raw.githubusercontent.com/UnicomAI/HiMo-CLIP/main/eval/text_mono/himo_docci_data.json"
)
HIMO_DOCCI_SHA256 = "100b6a54489ddde771d2605f6dae9eb1712f67f7b39a9e1ee975ee2b75e14c77"

LAYOUTS = {
    "ShareGPT4V": "a JSON list of {'image': <path relative to image_root>, "
    "'conversations': [..., {'value': <caption>}]}",
    "Urban1k": "root/image/<id>.jpg and root/caption/<id>.txt (caption = first line)",
    "DOCCI": "root/docci_descriptions.jsonlines (keys image_file, description, split) or "
    "root/test_set.jsonl, images in root/images/",
    "Long-DCI": "a tab-separated dci_long.csv with columns filepath, title; images under image_root",
    "Flickr30k": "a text file of lines 'name.jpg#k<TAB>caption', 5 per image; images in image_root",
    "COCO": "captions_val2017.json (at the root or in annotations/) in COCO format (images: id, file_name; annotations: "
    "image_id, caption); images in image_root",
    "HierarCaps": "root/hierarcaps_test.csv (columns id, captions, image_url; captions "
    "'general => ... => specific') and root/test_imgs/COCO_val2014_<12-digit id>.jpg",
    "HiMo-Docci": "JSON Lines with keys img_path, caption (list of cumulative prefixes), "
    "raw_caption; DOCCI images in image_root",
    "ImageNet": "root/<wnid>/*.JPEG, one folder per class, plus class names per wnid",
    "COLA": "a JSON list of [image_1_url, caption_1, image_2_url, caption_2]; images in "
    "image_root named by the URL's last path part",
    "CUB": "CUB_200_2011/images.txt, image_class_labels.txt (1-based) and "
    "train_test_split.txt (0 = test), each an id and one value a line; images under "
    "CUB_200_2011/images",
}


def require_path(path: str | Path, dataset: str) -> Path:
    """``path`` as a Path; FileNotFoundError naming it and ``dataset``'s layout if absent."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{dataset}: {path} does not exist; expected {LAYOUTS[dataset]}")
    return path


def record(item: Any, dataset: str, where: str) -> Record:
    """``item`` of ``dataset`` at ``where``, read field by field with the checks of
    :class:`~paperlib.data.records.Record` against ``dataset``'s layout."""
    return Record(dataset, where, LAYOUTS[dataset], item)


def get_field(item: Any, key: str | int, dataset: str, where: str) -> Any:
    """``item[key]``, or a DatasetFormatError naming the file/row, the field and the layout."""
    return record(item, dataset, where).field(key)


def json_list(data: Any, dataset: str, path: Path, what: str = "a JSON list") -> list:
    """``data`` when it is a list; a DatasetFormatError naming ``path`` otherwise."""
    if not isinstance(data, list):
        raise DatasetFormatError(
            f"{dataset}: {path} holds a {type(data).__name__}, not {what}; expected "
            f"{LAYOUTS[dataset]}"
        )
    return data


def check_images(samples: Sequence[Sample], dataset: str) -> list[Sample]:
    """Raise FileNotFoundError listing (up to 5) image paths of ``samples`` that do not exist."""
    missing = [str(s.image) for s in samples if s.image is not None and not Path(s.image).exists()]
    if missing:
        raise FileNotFoundError(
            f"{dataset}: {len(missing)} image files missing, e.g. {missing[:5]}; "
            f"expected {LAYOUTS[dataset]}"
        )
    return samples


def read_text(path: Path, dataset: str) -> str:
    """The UTF-8 text of a dataset file (a leading byte-order mark dropped; line ends as
    written), or a DatasetFormatError naming the file: not UTF-8 (the first bad byte; UTF-16
    named as such), a folder, or unreadable."""
    try:
        data = path.read_bytes()
    except OSError as err:
        what = "a folder, not a file" if path.is_dir() else f"unreadable ({err.strerror})"
        raise DatasetFormatError(
            f"{dataset}: {path} is {what}; expected {LAYOUTS[dataset]}"
        ) from None
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise DatasetFormatError(
            f"{dataset}: {path} is UTF-16 text (it starts with a UTF-16 byte-order mark); "
            f"expected UTF-8 (re-save it as UTF-8): {LAYOUTS[dataset]}"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise DatasetFormatError(
            f"{dataset}: {path} is not UTF-8 text (byte {err.start}: {err.reason}); "
            f"expected {LAYOUTS[dataset]}"
        ) from None


def read_json(path: Path, dataset: str) -> Any:
    """A dataset's JSON file, or a DatasetFormatError naming the file and the parse error."""
    try:
        return json.loads(read_text(path, dataset))
    except json.JSONDecodeError as err:
        raise DatasetFormatError(f"{dataset}: {path} is not valid JSON ({err})") from None


def read_rows(path: Path, dataset: str, delimiter: str = ",") -> list[dict[str, str]]:
    """The rows of a CSV (or TSV) dataset file under its header; a DatasetFormatError when
    the file has no data row."""
    handle = io.StringIO(read_text(path, dataset), newline="")
    reader = csv.DictReader(handle, delimiter=delimiter)
    try:
        rows = list(reader)
    except csv.Error as err:  # e.g. a field past csv's limit of 131072 characters
        raise DatasetFormatError(
            f"{dataset}: {path} after line {reader.line_num}: not a readable row ({err}); "
            f"expected {LAYOUTS[dataset]}"
        ) from None
    if not rows:
        raise DatasetFormatError(
            f"{dataset}: {path} has no data rows (empty or header only); expected "
            f"{LAYOUTS[dataset]}"
        )
    return rows


def _read_json_lines(path: Path, dataset: str) -> list[dict[str, Any]]:
    items = []
    for number, line in enumerate(read_text(path, dataset).splitlines(), 1):
        if line.strip():
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise DatasetFormatError(f"{dataset}: {path} line {number}: {err}") from None
    return items


# --------------------------------------------------------------------------- long text


def load_sharegpt4v(
    json_path: str | Path,
    image_root: str | Path,
    split: str = "all",
    val_size: int = 1000,
    require_images: bool = True,
) -> list[Sample]:
    """ShareGPT4V: caption = conversations[1].value with newlines as spaces
    (``docs/methods/conventions.md#dataset-formats``).

    ``split``: "all", "val" (first ``val_size`` entries, Long-CLIP's choice) or "train" (rest).
    Ids (``id``, else the image path) must be unique in the "val" split, the one evaluated
    (training tolerates a repeated sample).
    """
    if split not in ("all", "train", "val"):
        raise ValueError(f"split must be 'all', 'train' or 'val', got {split!r}")
    path, root = require_path(json_path, "ShareGPT4V"), Path(image_root)
    items = json_list(read_json(path, "ShareGPT4V"), "ShareGPT4V", path)
    first = val_size if split == "train" else 0
    items = items[:val_size] if split == "val" else items[val_size:] if split == "train" else items
    samples = []
    for i, item in enumerate(items, first):
        entry = record(item, "ShareGPT4V", f"{path} item {i}")
        image = entry.path("image", root)
        turn = Record(entry.dataset, entry.where, entry.layout, entry.field("conversations"))
        turn = Record(entry.dataset, entry.where, entry.layout, turn.field(1))
        caption = turn.text("value").replace("\n", " ")
        sample_id = str(entry.identifier("id")) if "id" in item else entry.text("image")
        samples.append(Sample(id=sample_id, image=image, caption=caption))
    if split == "val":
        unique_ids([s.id for s in samples], "ShareGPT4V", path)
    return check_images(samples, "ShareGPT4V") if require_images else samples


def load_urban1k(root: str | Path, require_images: bool = True) -> list[Sample]:
    """Urban1k: ``caption/<id>.txt`` (first line) paired with ``image/<id>.jpg``, sorted by id."""
    root = require_path(root, "Urban1k")
    if (root / "Urban1k").is_dir():
        root = root / "Urban1k"
    caption_dir = require_path(root / "caption", "Urban1k")
    samples = []
    for text_file in sorted(caption_dir.glob("*.txt")):
        lines = read_text(text_file, "Urban1k").splitlines()
        if not lines or not lines[0].strip():
            raise DatasetFormatError(
                f"Urban1k: {text_file} is empty or its first line blank; expected "
                f"{LAYOUTS['Urban1k']}"
            )
        image = root / "image" / f"{text_file.stem}.jpg"
        samples.append(Sample(id=text_file.stem, image=image, caption=lines[0].strip()))
    if not samples:
        raise FileNotFoundError(
            f"Urban1k: no .txt files in {caption_dir}; expected {LAYOUTS['Urban1k']}"
        )
    return check_images(samples, "Urban1k") if require_images else samples


def load_docci(root: str | Path, split: str = "test", require_images: bool = True) -> list[Sample]:
    """DOCCI: ``docci_descriptions.jsonlines`` filtered to ``split``, or ``test_set.jsonl``."""
    root = require_path(root, "DOCCI")
    full, test = root / "docci_descriptions.jsonlines", root / "test_set.jsonl"
    if full.exists():
        lines = _read_json_lines(full, "DOCCI")
        path, items = full, [x for x in lines if not isinstance(x, dict) or x.get("split") == split]
    elif test.exists() and split == "test":
        path, items = test, _read_json_lines(test, "DOCCI")
    else:
        raise FileNotFoundError(
            f"DOCCI: neither {full} nor {test} exists; expected {LAYOUTS['DOCCI']}"
        )
    samples = []
    for i, item in enumerate(items):
        entry = record(item, "DOCCI", f"{path} line {i + 1}")
        image = entry.path("image_file", root / "images")
        caption = entry.text("description")
        sample_id = str(entry.identifier("example_id")) if "example_id" in item else image.stem
        samples.append(Sample(id=sample_id, image=image, caption=caption))
    unique_ids([s.id for s in samples], "DOCCI", path)
    return check_images(samples, "DOCCI") if require_images else samples


def load_long_dci(
    csv_path: str | Path, image_root: str | Path, require_images: bool = True
) -> list[Sample]:
    """Long-DCI: tab-separated ``dci_long.csv``; ``filepath`` under image_root, ``title`` caption."""
    path, root = require_path(csv_path, "Long-DCI"), Path(image_root)
    rows = read_rows(path, "Long-DCI", delimiter="\t")
    samples = []
    for i, row in enumerate(rows):
        entry = record(row, "Long-DCI", f"{path} row {i + 1}")
        image = entry.path("filepath", root)
        samples.append(Sample(id=image.stem, image=image, caption=entry.text("title")))
    unique_ids([str(s.image) for s in samples], "Long-DCI", path)
    return check_images(samples, "Long-DCI") if require_images else samples


# --------------------------------------------------------------------------- short retrieval


def load_flickr30k(
    captions_file: str | Path,
    image_root: str | Path,
    captions_per_image: int = 5,
    require_images: bool = True,
) -> list[Sample]:
    """Flickr30k 1k test: lines ``name.jpg#k<TAB>caption``; ``captions`` ordered by k."""
    path, root = require_path(captions_file, "Flickr30k"), Path(image_root)
    grouped: dict[str, dict[int, str]] = {}
    for number, line in enumerate(read_text(path, "Flickr30k").splitlines(), 1):
        if not line.strip():
            continue
        key, tab, caption = line.partition("\t")
        name, hash_mark, k = key.rpartition("#")
        if not tab or not hash_mark or not k.isdigit():
            raise DatasetFormatError(
                f"Flickr30k: {path} line {number} is {line[:60]!r}; expected {LAYOUTS['Flickr30k']}"
            )
        entry = record(line, "Flickr30k", f"{path} line {number}")
        entry.path("image name", root, name)
        captions = grouped.setdefault(name, {})
        if int(k) in captions:
            raise entry.error(f" repeats caption #{k} of {name}")
        captions[int(k)] = entry.check_text(caption, "caption").strip()
    samples = []
    for name, caps in grouped.items():
        if len(caps) != captions_per_image:
            raise DatasetFormatError(
                f"Flickr30k: {path}: image {name} has {len(caps)} captions, expected "
                f"{captions_per_image}"
            )
        ordered = [caps[k] for k in sorted(caps)]
        samples.append(
            Sample(id=Path(name).stem, image=root / name, caption=ordered[0], captions=ordered)
        )
    return check_images(samples, "Flickr30k") if require_images else samples


def load_coco_captions(
    annotation_file: str | Path, image_root: str | Path, captions_per_image: int = 5,
    require_images: bool = True, keep_all: bool = False,
) -> list[Sample]:  # fmt: skip
    """COCO 5k (val2017): images in file order, first ``captions_per_image`` captions each
    (``keep_all``: every caption, still at least ``captions_per_image``)."""
    path, root = require_path(annotation_file, "COCO"), Path(image_root)
    data = record(read_json(path, "COCO"), "COCO", str(path))
    images = json_list(data.field("images"), "COCO", path, "a list of images")
    annotations = json_list(data.field("annotations"), "COCO", path, "a list of annotations")
    captions: dict[int | str, list[str]] = {}
    for i, ann in enumerate(annotations):
        entry = record(ann, "COCO", f"{path} annotation {i}")
        captions.setdefault(entry.identifier("image_id"), []).append(entry.text("caption").strip())
    samples = []
    for i, image in enumerate(images):
        entry = record(image, "COCO", f"{path} image {i}")
        image_id = entry.identifier("id")
        file_name = entry.path("file_name", root)
        caps = captions.get(image_id, [])[: None if keep_all else captions_per_image]
        if len(caps) < captions_per_image:
            raise DatasetFormatError(
                f"COCO: {path}: image {image_id} has {len(caps)} captions, expected at least "
                f"{captions_per_image}"
            )
        samples.append(Sample(id=str(image_id), image=file_name, caption=caps[0], captions=caps))
    unique_ids([s.id for s in samples], "COCO", path)
    return check_images(samples, "COCO") if require_images else samples


# --------------------------------------------------------------------------- hierarchy


def split_chain(captions: str, separator: str = "=>") -> list[str]:
    """A HierarCaps ``captions`` field ``"a => b => c => d"`` → ``["a", "b", "c", "d"]``."""
    return [part.strip() for part in captions.split(separator)]


def load_hierarcaps(root: str | Path, levels: int = 4, require_images: bool = True) -> list[Sample]:
    """HierarCaps test: ``chain`` = the ' => '-separated captions (general -> specific),
    ``caption`` = the last (original COCO) caption, image id from the end of ``image_url``."""
    root = require_path(root, "HierarCaps")
    path = require_path(root / "hierarcaps_test.csv", "HierarCaps")
    rows = read_rows(path, "HierarCaps")
    samples = []
    for i, row in enumerate(rows):
        where = f"{path} row {i + 1}"
        entry = record(row, "HierarCaps", where)
        chain = split_chain(entry.text("captions"))
        url = entry.text("image_url")
        if len(chain) != levels or not all(chain):
            raise DatasetFormatError(
                f"HierarCaps: {where} has {len(chain)} levels {brief(chain)}, expected "
                f"{levels} non-empty ones"
            )
        digits = Path(url).stem.rsplit("_", 1)[-1]
        if not digits.isdigit():
            raise DatasetFormatError(
                f"HierarCaps: {where}: image_url {url!r} does not end in COCO_val2014_<id>.jpg"
            )
        image_id = int(digits)
        samples.append(
            Sample(
                id=entry.text("id"),
                image=root / "test_imgs" / f"COCO_val2014_{image_id:012d}.jpg",
                caption=chain[-1],
                short_caption=chain[0],
                chain=chain,
                meta={"image_id": image_id, "image_url": url},
            )
        )
    unique_ids([s.id for s in samples], "HierarCaps", path)
    return check_images(samples, "HierarCaps") if require_images else samples


def load_himo_docci(
    json_path: str | Path, image_root: str | Path | None = None, require_images: bool = True
) -> list[Sample]:
    """HiMo-Docci: ``segments`` = the K cumulative prefixes, ``caption`` = ``raw_caption``.

    ``image`` is ``image_root / img_path`` (the DOCCI test images), or None without image_root.
    """
    path = require_path(json_path, "HiMo-Docci")
    samples = []
    for i, item in enumerate(_read_json_lines(path, "HiMo-Docci")):
        entry = record(item, "HiMo-Docci", f"{path} line {i + 1}")
        img_path = entry.text("img_path")
        image = entry.path("img_path", "." if image_root is None else image_root)
        segments = entry.texts("caption", cumulative=True)
        samples.append(
            Sample(
                id=Path(img_path).stem,
                image=None if image_root is None else image,
                caption=entry.text("raw_caption"),
                short_caption=segments[0],
                segments=segments,
                meta={"img_path": img_path},
            )
        )
    unique_ids([s.meta["img_path"] for s in samples], "HiMo-Docci", path)
    return check_images(samples, "HiMo-Docci") if require_images and image_root else samples


# --------------------------------------------------------------------------- classification


def load_class_names(
    source: str | Path | dict[str, str] | Sequence[str], wnids: list[str]
) -> list[str]:
    """Class names aligned with sorted ``wnids``, from a dict wnid->name, a list (sorted-wnid
    order) or a file: JSON (dict or list) or text (one name per line)."""
    if isinstance(source, (str, Path)):
        path = require_path(source, "ImageNet")
        source = (
            read_json(path, "ImageNet")
            if path.suffix == ".json"
            else [x for x in read_text(path, "ImageNet").splitlines() if x]
        )
    if isinstance(source, dict):
        missing = [w for w in wnids if w not in source]
        if missing:
            raise DatasetFormatError(f"ImageNet: no class name for folders {missing[:5]}")
        return [source[w] for w in wnids]
    names = list(source)
    if len(names) != len(wnids):
        raise DatasetFormatError(
            f"ImageNet: {len(names)} class names for {len(wnids)} class folders; expected one each"
        )
    return names


def load_image_folder(
    root: str | Path,
    class_names: str | Path | dict[str, str] | Sequence[str] | None = None,
    extensions: tuple[str, ...] = (".jpeg", ".jpg", ".png"),
) -> list[Sample]:
    """ImageNet-style ``root/<wnid>/*.JPEG``: label = index of the sorted wnid; ``caption`` =
    class name (the wnid when no names are given); ``meta`` has wnid and class_names."""
    root = require_path(root, "ImageNet")
    wnids = sorted(p.name for p in root.iterdir() if p.is_dir())
    if not wnids:
        raise FileNotFoundError(
            f"ImageNet: no class folders in {root}; expected {LAYOUTS['ImageNet']}"
        )
    names = wnids if class_names is None else load_class_names(class_names, wnids)
    samples = []
    for label, (wnid, name) in enumerate(zip(wnids, names)):
        for image in sorted((root / wnid).iterdir()):
            if image.suffix.lower() in extensions:
                samples.append(
                    Sample(
                        id=f"{wnid}/{image.stem}",
                        image=image,
                        caption=name,
                        label=label,
                        meta={"wnid": wnid},
                    )
                )
    return samples


# --------------------------------------------------------------------------- composition


def load_cola(
    json_path: str | Path, image_root: str | Path, require_images: bool = True
) -> list[Sample]:
    """COLA multi-object: one Sample per query; ``captions`` = [caption 1, caption 2] and
    ``meta['images']`` = [image 1, image 2]; caption k describes image k only."""
    path, root = require_path(json_path, "COLA"), Path(image_root)
    items = json_list(read_json(path, "COLA"), "COLA", path)
    samples = []
    for i, item in enumerate(items):
        if not isinstance(item, list) or len(item) != 4:
            raise DatasetFormatError(
                f"COLA: {path} item {i} is not a 4-element list; expected {LAYOUTS['COLA']}"
            )
        entry = record(item, "COLA", f"{path} item {i}")
        url1, cap1, url2, cap2 = (entry.text(k) for k in range(4))
        images = [
            entry.path(f"image_{k}_url", root, str(url).rsplit("/", 1)[-1])
            for k, url in ((1, url1), (2, url2))
        ]
        samples.append(
            Sample(
                id=f"cola-{i:04d}",
                image=images[0],
                caption=cap1,
                captions=[cap1, cap2],
                meta={"images": images, "urls": [url1, url2]},
            )
        )
    if require_images:
        missing = [str(p) for s in samples for p in s.meta["images"] if not p.exists()]
        if missing:
            raise FileNotFoundError(
                f"COLA: {len(missing)} images missing, e.g. {missing[:5]}; "
                f"expected {LAYOUTS['COLA']}"
            )
    return samples


# --------------------------------------------------------------------------- downloads


def sha256_of(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(url: str, dest: str | Path, sha256: str, timeout: float = 60.0) -> Path:
    """Download ``url`` to ``dest`` and verify its sha256; a verified existing file is kept.

    Offline, raises ConnectionError naming the URL and where to put the file by hand.
    """
    dest = Path(dest)
    if dest.exists() and sha256_of(dest) == sha256:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".part")
    try:
        with urlopen(url, timeout=timeout) as response, open(partial, "wb") as out:
            shutil.copyfileobj(response, out)
    except (URLError, OSError) as err:
        partial.unlink(missing_ok=True)
        raise ConnectionError(
            f"could not download {url} ({err}); download it elsewhere and put it at {dest}"
        ) from err
    got = sha256_of(partial)
    if got != sha256:
        partial.unlink()
        raise ValueError(f"checksum mismatch for {url}: sha256 {got}, expected {sha256}")
    partial.replace(dest)
    return dest


def fetch_hierarcaps(root: str | Path) -> Path:
    """``root/hierarcaps_test.csv`` (downloaded if absent); images are not downloaded."""
    return download(HIERARCAPS_URL, Path(root) / "hierarcaps_test.csv", HIERARCAPS_SHA256)


def fetch_himo_docci(root: str | Path) -> Path:
    """``root/himo_docci_data.json`` (downloaded if absent)."""
    return download(HIMO_DOCCI_URL, Path(root) / "himo_docci_data.json", HIMO_DOCCI_SHA256)
