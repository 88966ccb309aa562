"""The procedural hierarchical world: images of 1-4 shapes with exact ground truth.

Every sample is a pure function of ``(seed, index)`` (``numpy.random.default_rng([seed,
index])``, one ``rng.random`` draw, no global RNG). A scene holds 1-4 objects, each in its own
cell of a 3x3 grid, on a light textured background. Each object has a 3-level taxonomy
(super-category -> category -> sub-category, 4 x 3 x 2 = 24 shapes that stay distinct at 32-64
px) and attributes: colour (10), size (3), pattern (4) and position (9). Object 0 is the *main*
object (the zero-shot label): medium-sized or large, and strictly larger than every other
object, so the label is never ambiguous. Colours are distinct within an image, so "the red
ring" is unambiguous. Each scene also draws a naming level (``Scene.name_level``: 3
sub-category with probability 1/2, 2 category and 1 super-category with 1/4 each): the level at
which its short caption names the main object, as COCO captions say "a dog" or "a terrier".

Texts (all generated from the scene, never from pixels):

- ``short_caption`` (:func:`scene_short_caption`): a COCO-like one-liner, e.g. "A large red
  striped disc next to a blue ring on a beige background." or "A medium-sized green polygon
  with a pink arch, a black tall bar and a cyan ring on a cream background.": the main object's
  size, colour, pattern (unless plain) and name at ``name_level``, every other object's colour
  and sub-category, the background colour. At most 20 words: when longer, parts give way in the
  order of ``SHORT_CAPTION_DROPS``.
- ``caption``: a DOCCI-like description, sentences ordered general -> specific (main object's
  super-category and the background colour; its category and sub-category; what that
  sub-category looks like; its size, colour, pattern; its position; the object count; each
  other object, then its relation to the main object; the background texture); 60-150 words.
  ``segments``: its cumulative sentence prefixes (all of them, or ``num_segments`` evenly cut
  ones - the papers leave the cut open,
  ``docs/methods/himo-clip.md#segments``).
- ``chain`` (HierarCaps-like, 4 levels): 1 "a <super-category>", 2 "a <category>",
  3 "a <colour> <sub-category>", 4 "a <colour> <pattern> <sub-category> <relation> a <colour>
  <sub-category>" (or "... in the <position>" for single-object scenes). ``meta["chain_facts"]``
  holds the ground-truth facts each level asserts; level i+1's facts contain level i's.
- ``boxes``: one crop per object (phrase "a <colour> <pattern> <sub-category>") and one
  near-full-image crop (phrase = the short caption, lower-case first letter, no final period),
  the case ARGENT's intra weight targets.
- ``meta``: the object list with attributes and xyxy boxes, the background, taxonomy labels,
  the naming level, noise sentences irrelevant to the image (for SSI) and a COLA-style query
  that swaps the colours of two objects (:meth:`World.cola_pair` renders the matching swapped
  image).

Zero-shot prompts (:func:`zeroshot_prompts`) use the short caption's grammar: the class name
where the caption names the main object, after "A" and a size word. A prompt cannot know the
colour, pattern, other objects or background, so it leaves them out; the two possible size
words of a main object are spread over the ensemble (``PROMPT_TEMPLATES``: "A large {}.",
"A medium-sized {}.", "A large {} on a background.", "A medium-sized {} on a background.",
"A {} next to other shapes.").

Reference scorers for the COLA pairs (random, bag of words, attribute binding) live in
:mod:`paperlib.data.cola_baselines`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np
import torch
from PIL import Image
from torch.utils.data import Dataset

from paperlib.data.sample import BoxSample, Sample, pil_to_tensor, sample_to_item
from paperlib.segments import cumulative_prefixes

# --- taxonomy: super-category -> category -> sub-categories (leaf order = label order) ---
TAXONOMY: dict[str, dict[str, tuple[str, ...]]] = {
    "round shape": {
        "circle": ("disc", "ring"),
        "ellipse": ("wide ellipse", "tall ellipse"),
        "half circle": ("upper half circle", "lower half circle"),
    },
    "polygon": {
        "triangle": ("upward triangle", "downward triangle"),
        "square": ("upright square", "diamond"),
        "bar": ("wide bar", "tall bar"),
    },
    "cross shape": {
        "plus sign": ("thick plus sign", "thin plus sign"),
        "diagonal cross": ("thick diagonal cross", "thin diagonal cross"),
        "t shape": ("upright t shape", "upside-down t shape"),
    },
    "outline shape": {
        "frame": ("square frame", "diamond frame"),
        "cup shape": ("u shape", "arch"),
        "corner": ("l shape", "mirrored l shape"),
    },
}
SUPERS: tuple[str, ...] = tuple(TAXONOMY)
CATEGORIES: tuple[str, ...] = tuple(c for s in TAXONOMY.values() for c in s)
SUBCATEGORIES: tuple[str, ...] = tuple(x for s in TAXONOMY.values() for c in s.values() for x in c)
SUB_TO_CATEGORY: tuple[int, ...] = tuple(
    CATEGORIES.index(c) for s in TAXONOMY.values() for c, subs in s.items() for _ in subs
)
CATEGORY_TO_SUPER: tuple[int, ...] = tuple(i for i, s in enumerate(TAXONOMY.values()) for _ in s)
DEFINITIONS: tuple[str, ...] = (
    "A disc is a filled circle.",
    "A ring is a circle with an empty centre.",
    "A wide ellipse is a circle stretched sideways.",
    "A tall ellipse is a circle stretched upwards.",
    "An upper half circle is a circle cut flat at the bottom.",
    "A lower half circle is a circle cut flat at the top.",
    "An upward triangle points to the top.",
    "A downward triangle points to the bottom.",
    "An upright square has flat sides.",
    "A diamond is a square turned on its corner.",
    "A wide bar is a flat horizontal rectangle.",
    "A tall bar is a narrow vertical rectangle.",
    "A thick plus sign has two broad crossing arms.",
    "A thin plus sign has two narrow crossing arms.",
    "A thick diagonal cross has two broad arms.",
    "A thin diagonal cross has two narrow arms.",
    "An upright t shape has its bar at the top.",
    "An upside-down t shape has its bar at the bottom.",
    "A square frame is a square with a hollow middle.",
    "A diamond frame is a diamond with a hollow middle.",
    "A u shape is a frame open at the top.",
    "An arch is a frame open at the bottom.",
    "An l shape has its corner at the bottom left.",
    "A mirrored l shape has its corner at the bottom right.",
)

COLOURS: tuple[tuple[str, tuple[int, int, int]], ...] = (
    ("red", (220, 40, 40)),
    ("orange", (245, 140, 20)),
    ("yellow", (240, 220, 30)),
    ("green", (40, 170, 60)),
    ("cyan", (30, 200, 210)),
    ("blue", (40, 70, 220)),
    ("purple", (130, 50, 190)),
    ("pink", (240, 110, 190)),
    ("brown", (130, 80, 40)),
    ("black", (25, 25, 25)),
)
BACKGROUNDS: tuple[tuple[str, tuple[int, int, int]], ...] = (
    ("light grey", (200, 200, 200)),
    ("beige", (225, 210, 180)),
    ("pale blue", (190, 210, 235)),
    ("pale green", (195, 225, 195)),
    ("lavender", (215, 200, 230)),
    ("cream", (240, 235, 215)),
)
TEXTURES: tuple[str, ...] = ("plain", "grainy", "gradient", "faintly striped")
SIZES: tuple[str, ...] = ("small", "medium-sized", "large")
SIZE_FRACTIONS: tuple[float, ...] = (0.6, 0.8, 1.0)  # side of the shape / side of its grid cell
PATTERNS: tuple[str, ...] = ("plain", "striped", "dotted", "checkered")
PATTERN_PHRASES: tuple[str, ...] = (
    "no pattern",
    "darker horizontal stripes",
    "a grid of darker dots",
    "a darker checkered pattern",
)
# fmt: off
POSITIONS: tuple[str, ...] = (
    "top left corner", "top centre", "top right corner",
    "middle left", "centre", "middle right",
    "bottom left corner", "bottom centre", "bottom right corner",
)
# fmt: on
NUMBER_WORDS: tuple[str, ...] = ("no", "one", "two", "three", "four")
NOISE_SENTENCES: tuple[str, ...] = (
    "The weather forecast promised light rain for the weekend.",
    "Her grandmother baked bread every Sunday morning.",
    "The train to the coast leaves at twenty past nine.",
    "Stock markets closed slightly higher on Tuesday.",
    "He has been learning to play the violin for years.",
    "The library extended its opening hours in winter.",
    "A good cup of tea needs water that has just boiled.",
    "The football match was postponed because of fog.",
    "Several new restaurants opened near the harbour.",
    "The committee will publish its report next month.",
    "Mountain goats can climb almost vertical cliffs.",
    "The recipe calls for two spoons of honey.",
    "Her favourite novel was written in the last century.",
    "The museum closes early on public holidays.",
    "Traffic on the bridge was slow during the repairs.",
    "The choir rehearses in the old church hall.",
    "A loud thunderstorm kept the village awake.",
    "The software update fixed a problem with printing.",
    "Bees visit thousands of flowers in a single day.",
    "The lecture on ancient history was fully booked.",
)
# zero-shot prompts in the short caption's grammar; colour, pattern and the other objects are
# left out, the size word (the main object is medium-sized or large) is spread over the ensemble
PROMPT_TEMPLATES: tuple[str, ...] = (
    "A large {}.",
    "A medium-sized {}.",
    "A large {} on a background.",
    "A medium-sized {} on a background.",
    "A {} next to other shapes.",
)


@dataclass(frozen=True)
class WorldObject:
    """One shape: taxonomy leaf, attributes and grid cell (row-major 0..8)."""

    sub: int
    colour: int
    size: int
    pattern: int
    cell: int

    @property
    def category(self) -> int:
        return SUB_TO_CATEGORY[self.sub]

    @property
    def super(self) -> int:
        return CATEGORY_TO_SUPER[self.category]


@dataclass(frozen=True)
class Scene:
    """What an image shows: objects (the strictly largest, main object first), the background,
    and the taxonomy level (1-3) at which the short caption names the main object."""

    objects: tuple[WorldObject, ...]
    background: int
    texture: int
    noise: tuple[int, ...]
    name_level: int = 3  # taxonomy level at which the short caption names the main object


def draw_scene(seed: int, index: int, min_objects: int = 1, max_objects: int = 4) -> Scene:
    """The scene of sample ``index``: a pure function of (seed, index), no global RNG."""
    if not 1 <= min_objects <= max_objects <= 4:
        raise ValueError(
            f"need 1 <= min_objects <= max_objects <= 4, got {min_objects}, {max_objects}"
        )
    rng = np.random.default_rng([seed, index])
    r = rng.random(35 + len(NOISE_SENTENCES))  # one draw; slices below are independent
    n = min_objects + int(r[0] * (max_objects - min_objects + 1))
    cells = np.argsort(r[1:10])[:n]
    colours = np.argsort(r[10 : 10 + len(COLOURS)])[:n]  # distinct within an image
    attrs = r[20:32].reshape(4, 3)  # per object: sub-category, size, pattern
    main_size = 1 + int(attrs[0, 1] * 2)  # medium or large; every other object is smaller
    sizes = [main_size] + [int(attrs[k, 1] * main_size) for k in range(1, n)]
    objects = tuple(
        WorldObject(
            sub=int(attrs[k, 0] * len(SUBCATEGORIES)),
            colour=int(colours[k]),
            size=sizes[k],
            pattern=int(attrs[k, 2] * len(PATTERNS)),
            cell=int(cells[k]),
        )
        for k in range(n)
    )
    return Scene(
        objects=objects,
        background=int(r[32] * len(BACKGROUNDS)),
        texture=int(r[33] * len(TEXTURES)),
        noise=tuple(int(i) for i in np.argsort(r[35:])[:3]),
        name_level=3 if r[34] < 0.5 else 2 if r[34] < 0.75 else 1,
    )


def counterfactual_twin(scene: Scene, seed: int, index: int) -> Scene:
    """``scene`` with its main object's shape replaced by one of another super-category, drawn
    from (seed, index); colours, sizes, layout, background and naming level are kept.

    The twin's short caption differs from the scene's in the main object's name, at every naming
    level (and, where the name's length moves the 20-word limit, in which optional words give
    way: about 1 caption in 5), so a batch holding both cannot be solved by colour or layout: an
    in-batch hard negative for the shape (a training choice of this world; the papers train on
    web data)."""
    main = scene.objects[0]
    others = [
        s for s in range(len(SUBCATEGORIES)) if CATEGORY_TO_SUPER[SUB_TO_CATEGORY[s]] != main.super
    ]
    sub = others[int(np.random.default_rng([seed, index, 7]).integers(len(others)))]
    return replace(scene, objects=(replace(main, sub=sub),) + scene.objects[1:])


# --------------------------------------------------------------------------- rendering


def _unit_grid(side: int) -> tuple[np.ndarray, np.ndarray]:
    """Pixel-centre coordinates in [-1, 1]: (y, x) each (side, side); y grows downwards."""
    t = (np.arange(side) + 0.5) / side * 2.0 - 1.0
    return np.meshgrid(t, t, indexing="ij")


def shape_mask(sub: int, side: int) -> np.ndarray:
    """Boolean (side, side) mask of sub-category ``sub`` (index into SUBCATEGORIES)."""
    y, x = _unit_grid(side)
    ax, ay, r = np.abs(x), np.abs(y), np.hypot(x, y)
    thin, thick = max(0.16, 1.01 / side), max(0.32, 3.01 / side)  # >= 2 and 4 px wide arms
    inside = (ax <= 0.95) & (ay <= 0.95)
    masks = (
        r <= 0.95,  # disc
        (r <= 0.95) & (r >= 0.5),  # ring
        (x / 0.95) ** 2 + (y / 0.62) ** 2 <= 1,  # wide ellipse
        (x / 0.62) ** 2 + (y / 0.95) ** 2 <= 1,  # tall ellipse
        (r <= 0.95) & (y <= 0.2),  # upper half circle
        (r <= 0.95) & (y >= -0.2),  # lower half circle
        inside & (ax <= (y + 0.95) / 1.9 * 0.95),  # upward triangle
        inside & (ax <= (0.95 - y) / 1.9 * 0.95),  # downward triangle
        (ax <= 0.8) & (ay <= 0.8),  # upright square
        ax + ay <= 0.97,  # diamond
        (ax <= 0.95) & (ay <= 0.4),  # wide bar
        (ax <= 0.4) & (ay <= 0.95),  # tall bar
        inside & ((ax <= thick) | (ay <= thick)),  # thick plus
        inside & ((ax <= thin) | (ay <= thin)),  # thin plus
        inside & ((np.abs(x - y) <= 0.45) | (np.abs(x + y) <= 0.45)),  # thick x
        inside & ((np.abs(x - y) <= 0.24) | (np.abs(x + y) <= 0.24)),  # thin x
        inside & ((y <= -0.45) | (ax <= 0.25)),  # upright t
        inside & ((y >= 0.45) | (ax <= 0.25)),  # upside-down t
        inside & ((ax >= 0.5) | (ay >= 0.5)),  # square frame
        (ax + ay <= 0.97) & (ax + ay >= 0.5),  # diamond frame
        inside & ((ax >= 0.5) | (y >= 0.5)),  # u shape
        inside & ((ax >= 0.5) | (y <= -0.5)),  # arch
        inside & ((x <= -0.4) | (y >= 0.4)),  # l shape
        inside & ((x >= 0.4) | (y >= 0.4)),  # mirrored l shape
    )
    return masks[sub]


def pattern_mask(pattern: int, side: int) -> np.ndarray:
    """Boolean (side, side) mask of the pixels drawn in the darker shade for ``pattern``."""
    row, col = np.meshgrid(np.arange(side), np.arange(side), indexing="ij")
    step = max(2, side // 6)
    if pattern == 0:
        return np.zeros((side, side), dtype=bool)
    if pattern == 1:
        return (row // step) % 3 == 2
    if pattern == 2:
        return ((row // step) % 3 == 1) & ((col // step) % 3 == 1)
    return ((row // step + col // step) % 2) == 1


def shade(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    """The darker shade used for patterns: half the colour plus a grey floor."""
    return tuple(int(v * 0.5 + 40) for v in rgb)


def grid_edges(image_size: int) -> np.ndarray:
    """Pixel edges of the 3x3 grid cells: 4 integers from 0 to image_size."""
    return np.linspace(0, image_size, 4).round().astype(int)


@lru_cache(maxsize=64)
def _box_table(image_size: int) -> tuple[tuple[tuple[int, int, int, int], ...], ...]:
    """xyxy box of every (cell, size): the shape's square centred in its grid cell."""
    edges = grid_edges(image_size)
    cell = int(min(np.diff(edges)))
    table = []
    for index in range(9):
        row, col = divmod(index, 3)
        boxes = []
        for fraction in SIZE_FRACTIONS:
            side = max(3, round(fraction * cell))
            x0 = int(edges[col] + (edges[col + 1] - edges[col] - side) // 2)
            y0 = int(edges[row] + (edges[row + 1] - edges[row] - side) // 2)
            boxes.append((x0, y0, x0 + side, y0 + side))
        table.append(tuple(boxes))
    return tuple(table)


def object_box(obj: WorldObject, image_size: int) -> tuple[int, int, int, int]:
    """xyxy pixel box (x1, y1 exclusive) of an object: its shape's square, centred in its cell."""
    return _box_table(image_size)[obj.cell][obj.size]


@lru_cache(maxsize=4096)
def _patch(sub: int, colour: int, pattern: int, side: int) -> tuple[np.ndarray, np.ndarray]:
    """Cached (mask (side, side, 1), rgb (side, side, 3)) of one coloured, patterned shape."""
    mask = shape_mask(sub, side)
    dark = pattern_mask(pattern, side)
    if not (mask & ~dark).any():  # the pattern would hide the colour: use the other squares
        dark = ~dark
    rgb = np.empty((side, side, 3), dtype=np.uint8)
    rgb[:] = COLOURS[colour][1]
    rgb[dark] = shade(COLOURS[colour][1])
    return mask[:, :, None], rgb


@lru_cache(maxsize=64)
def _background(background: int, texture: int, image_size: int) -> np.ndarray:
    """Cached (S, S, 3) uint8 background: a light colour with a fixed low-contrast texture."""
    base = np.asarray(BACKGROUNDS[background][1], dtype=np.int16)
    y, x = np.meshgrid(np.arange(image_size), np.arange(image_size), indexing="ij")
    if texture == 0:
        delta = np.zeros((image_size, image_size))
    elif texture == 1:
        delta = np.random.default_rng([7, image_size]).integers(-10, 11, (image_size, image_size))
    elif texture == 2:
        delta = (y / max(image_size - 1, 1) - 0.5) * 30
    else:
        delta = np.where(((x + y) // max(2, image_size // 16)) % 2 == 0, 8, -8)
    image = base[None, None, :] + np.asarray(delta, dtype=np.int16)[:, :, None]
    image = np.clip(image, 0, 255).astype(np.uint8)
    image.flags.writeable = False
    return image


def render_scene(scene: Scene, image_size: int) -> np.ndarray:
    """Draw ``scene`` as a (S, S, 3) uint8 array; objects never overlap (one per grid cell)."""
    if not 32 <= image_size <= 224:
        raise ValueError(f"image_size must be in [32, 224], got {image_size}")
    canvas = _background(scene.background, scene.texture, image_size).copy()
    for obj in scene.objects:
        x0, y0, x1, y1 = object_box(obj, image_size)
        mask, rgb = _patch(obj.sub, obj.colour, obj.pattern, x1 - x0)
        np.copyto(canvas[y0:y1, x0:x1], rgb, where=mask)
    return canvas


# --------------------------------------------------------------------------- text


def _relation(main: WorldObject, other: WorldObject) -> str:
    """Where ``main`` lies relative to ``other`` ("above and to the left of", ...)."""
    (r0, c0), (r1, c1) = divmod(main.cell, 3), divmod(other.cell, 3)
    vertical = "above" if r0 < r1 else "below" if r0 > r1 else ""
    horizontal = "to the left of" if c0 < c1 else "to the right of" if c0 > c1 else ""
    return " and ".join(p for p in (vertical, horizontal) if p)


def _size_relation(main: WorldObject, other: WorldObject) -> str:
    if main.size == other.size:
        return "as big"
    return "larger" if main.size > other.size else "smaller"


#: letters whose names start with a vowel sound ("an l shape", but "a u shape")
VOWEL_SOUND_LETTERS = "aefhilmnorsx"


def _article(phrase: str) -> str:
    """ "a" or "an" before ``phrase``: by its first letter, or, when its first word is a single
    letter (a shape named after one), by how that letter's name sounds."""
    word = phrase.split()[0]
    if len(word) == 1:
        return "an" if word in VOWEL_SOUND_LETTERS else "a"
    return "an" if word[0] in "aeiou" else "a"


def _name(obj: WorldObject) -> str:
    return f"{COLOURS[obj.colour][0]} {SUBCATEGORIES[obj.sub]}"


def _phrase(obj: WorldObject) -> str:
    """Box phrase: "a <colour> <pattern> <sub-category>"."""
    colour = COLOURS[obj.colour][0]
    return f"{_article(colour)} {colour} {PATTERNS[obj.pattern]} {SUBCATEGORIES[obj.sub]}"


def scene_sentences(scene: Scene) -> list[str]:
    """The long description's sentences, general -> specific (see module docstring)."""
    main, others = scene.objects[0], scene.objects[1:]
    sup, cat, sub = SUPERS[main.super], CATEGORIES[main.category], SUBCATEGORIES[main.sub]
    bg = BACKGROUNDS[scene.background][0]
    size, colour = SIZES[main.size], COLOURS[main.colour][0]
    sentences = [
        f"{_article(sup).capitalize()} {sup} on {_article(bg)} {bg} background.",
        f"It is {_article(cat)} {cat}, more precisely {_article(sub)} {sub}.",
        DEFINITIONS[main.sub],
        f"The {sub} is {size} and {colour}, with {PATTERN_PHRASES[main.pattern]}.",
        f"It sits in the {POSITIONS[main.cell]}.",
    ]
    n = len(others)
    if n == 0:
        sentences.append(
            "It is the only shape in the picture: the other eight cells of the 3 by 3 grid are empty."
        )
    else:
        plural = "is" if n == 1 else "are"
        sentences.append(f"There {plural} {NUMBER_WORDS[n]} more shape{'s' * (n > 1)}.")
    # name the main object by colour too when another object has the same sub-category
    subject = f"{colour} {sub}" if any(o.sub == main.sub for o in others) else sub
    for obj in others:
        other_size = SIZES[obj.size]
        sentences.append(
            f"{_article(other_size).capitalize()} {other_size} {COLOURS[obj.colour][0]} "
            f"{PATTERNS[obj.pattern]} {SUBCATEGORIES[obj.sub]} is in the {POSITIONS[obj.cell]}."
        )
        sentences.append(
            f"The {subject} is {_relation(main, obj)} it and {_size_relation(main, obj)}."
        )
    sentences.append(f"The {bg} background has a {TEXTURES[scene.texture]} texture.")
    return sentences


# what gives way in the short caption, in this order, until it fits in MAX_SHORT_WORDS words:
# "on a beige background" becomes "on beige", then the main object's pattern and size words go,
# then the background, then the other objects' articles (with all of these gone, the longest
# scene - four objects with three-word names - takes 19 words)
SHORT_CAPTION_DROPS: tuple[str, ...] = (
    "background word",
    "pattern",
    "size",
    "background",
    "articles",
)
MAX_SHORT_WORDS = 20


def _listing(items: list[str]) -> str:
    """Join as 'x', 'x and y' or 'x, y and z'."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _short_caption(scene: Scene, drop: tuple[str, ...]) -> str:
    """The short caption without the parts named in ``drop`` (see SHORT_CAPTION_DROPS)."""
    main, others = scene.objects[0], scene.objects[1:]
    level = scene.name_level
    name = class_names(level)[(main.super, main.category, main.sub)[level - 1]]
    words = [
        "" if "size" in drop else SIZES[main.size],
        COLOURS[main.colour][0],
        "" if "pattern" in drop or main.pattern == 0 else PATTERNS[main.pattern],
        name,
    ]
    words = [w for w in words if w]
    text = f"{_article(words[0]).capitalize()} {' '.join(words)}"
    if others:
        names = [_name(o) for o in others]
        if "articles" not in drop:
            names = [f"{_article(n)} {n}" for n in names]
        text += f" {'next to' if len(others) == 1 else 'with'} {_listing(names)}"
    bg = BACKGROUNDS[scene.background][0]
    if "background" not in drop:
        text += f" on {bg}" if "background word" in drop else f" on {_article(bg)} {bg} background"
    return text + "."


def scene_short_caption(scene: Scene) -> str:
    """COCO-like one-line caption: the main object (size, colour, pattern, name at the scene's
    ``name_level``), every other object (colour, sub-category), the background colour; at most
    MAX_SHORT_WORDS words (SHORT_CAPTION_DROPS says what gives way)."""
    for k in range(len(SHORT_CAPTION_DROPS) + 1):
        text = _short_caption(scene, SHORT_CAPTION_DROPS[:k])
        if len(text.split()) <= MAX_SHORT_WORDS:
            break
    return text


def scene_chain(scene: Scene) -> tuple[list[str], list[dict[str, str]]]:
    """The 4-level chain and the facts each level asserts (level i's facts within level i+1's)."""
    main, others = scene.objects[0], scene.objects[1:]
    sup, cat, sub = SUPERS[main.super], CATEGORIES[main.category], SUBCATEGORIES[main.sub]
    colour, pattern = COLOURS[main.colour][0], PATTERNS[main.pattern]
    facts3 = {"super": sup, "category": cat, "sub": sub, "colour": colour}
    if others:
        partner = COLOURS[others[0].colour][0]
        relation = f"{_relation(main, others[0])} {_article(partner)} {_name(others[0])}"
        level4 = f"{_article(colour)} {colour} {pattern} {sub} {relation}"
        facts4 = {**facts3, "pattern": pattern, "relation": relation}
    else:
        size, position = SIZES[main.size], POSITIONS[main.cell]
        level4 = f"{_article(size)} {size} {colour} {pattern} {sub} in the {position}"
        facts4 = {**facts3, "pattern": pattern, "size": size, "position": position}
    chain = [
        f"{_article(sup)} {sup}",
        f"{_article(cat)} {cat}",
        f"{_article(colour)} {colour} {sub}",
        level4,
    ]
    return chain, [{"super": sup}, {"super": sup, "category": cat}, facts3, facts4]


def scene_cola_query(scene: Scene) -> dict[str, Any] | None:
    """COLA-style query: the main object and the first other object of another sub-category,
    with their colours bound correctly ("caption") and swapped ("swapped_caption")."""
    main = scene.objects[0]
    partner = next((o for o in scene.objects[1:] if o.sub != main.sub), None)
    if partner is None:
        return None
    c0, c1 = COLOURS[main.colour][0], COLOURS[partner.colour][0]
    s0, s1 = SUBCATEGORIES[main.sub], SUBCATEGORIES[partner.sub]
    return {
        "caption": f"{_article(c0)} {c0} {s0} and {_article(c1)} {c1} {s1}",
        "swapped_caption": f"{_article(c1)} {c1} {s0} and {_article(c0)} {c0} {s1}",
        "objects": [0, scene.objects.index(partner)],
    }


def sentence_prefixes(sentences: list[str], num_segments: int | None = None) -> list[str]:
    """Cumulative sentence prefixes: all of them, or ``num_segments`` cut by the rule of
    :mod:`paperlib.segments` (our choice: the papers do not say how segments are cut)."""
    return cumulative_prefixes(sentences, num_segments, name="num_segments")


# --------------------------------------------------------------------------- the world


def class_names(level: int) -> tuple[str, ...]:
    """Zero-shot class names at taxonomy ``level``: 1 super-category, 2 category, 3 sub-category."""
    names = {1: SUPERS, 2: CATEGORIES, 3: SUBCATEGORIES}
    if level not in names:
        raise ValueError(
            f"level must be 1, 2 or 3 (super-category, category, sub-category), got {level}"
        )
    return names[level]


def zeroshot_prompts(level: int) -> dict[str, list[str]]:
    """Prompts per class name at ``level``, from PROMPT_TEMPLATES (article-corrected)."""
    out = {}
    for name in class_names(level):
        right = f"{_article(name)} {name}"
        fixes = ((f"a {name}", right), (f"A {name}", right.capitalize()))
        prompts = [t.format(name) for t in PROMPT_TEMPLATES]
        for wrong, fixed in fixes:
            prompts = [p.replace(wrong, fixed) for p in prompts]
        out[name] = prompts
    return out


def taxonomy_graph() -> list[tuple[str, str]]:
    """(parent, child) edges of the taxonomy: super-category -> category -> sub-category."""
    edges = []
    for sup, cats in TAXONOMY.items():
        for cat, subs in cats.items():
            edges.append((sup, cat))
            edges.extend((cat, s) for s in subs)
    return edges


def chain_graph(samples: list[Sample]) -> dict[str, set[str]]:
    """Union over samples of chain edges: parent caption -> set of child captions."""
    graph: dict[str, set[str]] = {}
    for sample in samples:
        for parent, child in zip(sample.chain, sample.chain[1:]):
            graph.setdefault(parent, set()).add(child)
    return graph


class World:
    """The generated world: ``world.sample(i)`` is a deterministic function of (seed, i).

    ``near_full_margin``: the near-full-image crop drops this fraction of the side on each
    edge (4% by default: the crop shows ~85% of the image's area).
    """

    def __init__(
        self,
        seed: int = 0,
        image_size: int = 64,
        num_segments: int | None = None,
        min_objects: int = 1,
        max_objects: int = 4,
        near_full_margin: float = 0.04,
    ) -> None:
        if not 32 <= image_size <= 224:
            raise ValueError(f"image_size must be in [32, 224], got {image_size}")
        self.seed, self.image_size, self.num_segments = seed, image_size, num_segments
        self.min_objects, self.max_objects = min_objects, max_objects
        self.near_full_margin = near_full_margin

    def scene(self, index: int) -> Scene:
        return draw_scene(self.seed, index, self.min_objects, self.max_objects)

    def sample(self, index: int) -> Sample:
        """Render sample ``index`` with all its texts, crops and ground truth."""
        return self.sample_from_scene(self.scene(index), f"world-{self.seed}-{index:08d}")

    def twin_sample(self, index: int) -> Sample:
        """Sample ``index``'s :func:`counterfactual_twin` (another main shape, all else kept)."""
        twin = counterfactual_twin(self.scene(index), self.seed, index)
        return self.sample_from_scene(twin, f"world-{self.seed}-{index:08d}-twin")

    def sample_from_scene(self, scene: Scene, sample_id: str) -> Sample:
        """Render ``scene`` and write all its texts; ground truth goes to ``meta``."""
        size = self.image_size
        pixels = render_scene(scene, size)
        sentences = scene_sentences(scene)
        chain, facts = scene_chain(scene)
        boxes = [self._crop(pixels, object_box(obj, size), _phrase(obj)) for obj in scene.objects]
        m = max(1, round(self.near_full_margin * size))
        short = scene_short_caption(scene)
        near_full = short[0].lower() + short[1:-1]
        boxes.append(self._crop(pixels, (m, m, size - m, size - m), near_full))
        main = scene.objects[0]
        return Sample(
            id=sample_id,
            image=Image.fromarray(pixels),
            caption=" ".join(sentences),
            short_caption=short,
            segments=sentence_prefixes(sentences, self.num_segments),
            chain=chain,
            boxes=boxes,
            label=main.sub,
            meta={
                "objects": [self._truth(obj) for obj in scene.objects],
                "background": BACKGROUNDS[scene.background][0],
                "texture": TEXTURES[scene.texture],
                "labels": [main.super, main.category, main.sub],
                "name_level": scene.name_level,
                "chain_facts": facts,
                "noise_sentences": [NOISE_SENTENCES[i] for i in scene.noise],
                "cola": scene_cola_query(scene),
                "box_kinds": ["object"] * len(scene.objects) + ["near_full"],
            },
        )

    def _crop(self, pixels: np.ndarray, box: tuple[int, int, int, int], phrase: str) -> BoxSample:
        x0, y0, x1, y1 = box
        return BoxSample(Image.fromarray(pixels[y0:y1, x0:x1]), phrase, box)

    def _truth(self, obj: WorldObject) -> dict[str, Any]:
        """Ground truth of one object (JSON-native, so it survives webdataset shards)."""
        return {
            "super": SUPERS[obj.super],
            "category": CATEGORIES[obj.category],
            "sub": SUBCATEGORIES[obj.sub],
            "colour": COLOURS[obj.colour][0],
            "rgb": list(COLOURS[obj.colour][1]),
            "size": SIZES[obj.size],
            "pattern": PATTERNS[obj.pattern],
            "position": POSITIONS[obj.cell],
            "cell": obj.cell,
            "box": list(object_box(obj, self.image_size)),
        }

    def cola_pair(self, index: int) -> tuple[Sample, Sample] | None:
        """COLA-style pair: sample ``index`` and the same scene with the two query objects'
        colours swapped; caption 1 fits image 1 only, caption 2 image 2 only. None when the
        scene has no two objects of different sub-categories."""
        scene = self.scene(index)
        query = scene_cola_query(scene)
        if query is None:
            return None
        i, j = query["objects"]
        objects = list(scene.objects)
        objects[i] = replace(scene.objects[i], colour=scene.objects[j].colour)
        objects[j] = replace(scene.objects[j], colour=scene.objects[i].colour)
        swapped = replace(scene, objects=tuple(objects))
        base_id = f"world-{self.seed}-{index:08d}"
        return self.sample_from_scene(scene, base_id), self.sample_from_scene(
            swapped, f"{base_id}-swapped"
        )


def chosen_box(world_seed: int, index: int, sample: Sample) -> BoxSample:
    """The box crop and phrase item ``index`` of world ``world_seed`` carries: one of the
    sample's boxes, drawn from (seed, index), the same in every epoch."""
    choice = int(np.random.default_rng([world_seed, index, 1]).integers(len(sample.boxes)))
    return sample.boxes[choice]


def box_crop(box: BoxSample, side: int) -> Image.Image:
    """``box``'s crop as training sees it: resized to ``side`` × ``side`` (bicubic), the
    world's image size, as ``WorldDataset`` gives it beside the whole image."""
    return box.image.resize((side, side), Image.BICUBIC)


class WorldDataset(Dataset):
    """Torch Dataset over ``World(seed, image_size)``: ``size`` dict samples for the engine.

    Items carry ``image`` and ``box_image`` tensors (via ``transform``, default [0, 1] CHW), the
    texts, ``label`` (sub-category) and ``labels`` (3 levels). ``box_image`` is one box crop per
    sample, chosen from (seed, index) and resized to ``image_size`` (HyCoCLIP picks one random
    box per step; here the choice is fixed so epochs are reproducible). Batch with
    :func:`paperlib.data.sample.collate_samples`.

    ``twins``: item ``2k + 1`` is the :func:`counterfactual_twin` of scene ``2k`` instead of scene
    ``2k + 1``; a sampler that keeps pairs in one batch (``GlobalBatchSampler(group=2)``) then
    makes every batch hold each main shape's hard negative.
    """

    def __init__(
        self,
        seed: int,
        size: int,
        image_size: int = 64,
        transform: Callable[[Image.Image], torch.Tensor] | None = None,
        num_segments: int | None = None,
        min_objects: int = 1,
        max_objects: int = 4,
        twins: bool = False,
    ) -> None:
        self.world = World(seed, image_size, num_segments, min_objects, max_objects)
        self.size, self.twins = size, twins
        self.transform = transform or pil_to_tensor

    def __len__(self) -> int:
        return self.size

    def raw_item(self, index: int) -> dict[str, Any]:
        """Item ``index`` before the transform: ``image`` and ``box_image`` (one box crop,
        chosen from (seed, index), resized to ``image_size``) as PIL images, and its texts."""
        if not 0 <= index < self.size:
            raise IndexError(f"index {index} out of range for WorldDataset of size {self.size}")
        twin = self.twins and index % 2 == 1
        sample = self.world.twin_sample(index - 1) if twin else self.world.sample(index)
        item = sample_to_item(sample, sample.image)
        box = chosen_box(self.world.seed, index, sample)
        item["box_image"] = box_crop(box, self.world.image_size)
        item["box_phrase"] = box.phrase
        item["labels"] = sample.meta["labels"]
        item["noise_sentences"] = sample.meta["noise_sentences"]
        return item

    def __getitem__(self, index: int) -> dict[str, Any]:
        item = self.raw_item(index)
        item["image"] = self.transform(item["image"])
        item["box_image"] = self.transform(item["box_image"])
        item["labels"] = torch.tensor(item["labels"], dtype=torch.long)
        return item


def world_fingerprint(seed: int, image_size: int, twins: bool = False, items: int = 4) -> str:
    """A short hash of what the world draws for ``seed`` (the first ``items`` training items:
    pixels, crops and texts): caches of rendered worlds and of their embeddings carry it, so a
    change to how the world draws or writes a scene makes them stale rather than silently used."""
    dataset = WorldDataset(seed, items, image_size, twins=twins)
    digest = hashlib.sha1()
    for index in range(items):
        item = dataset.raw_item(index)
        digest.update(item["image"].tobytes() + item["box_image"].tobytes())
        texts = {k: v for k, v in item.items() if isinstance(v, (str, list, int))}
        digest.update(repr(sorted(texts.items())).encode())
    return digest.hexdigest()[:10]
