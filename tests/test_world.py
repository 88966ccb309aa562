"""The procedural world: determinism, pixels agree with texts, short captions, segments, chains."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader

from paperlib.data.sample import collate_samples
from paperlib.data.world import (
    BACKGROUNDS,
    COLOURS,
    MAX_SHORT_WORDS,
    NOISE_SENTENCES,
    PATTERNS,
    POSITIONS,
    PROMPT_TEMPLATES,
    SHORT_CAPTION_DROPS,
    SIZES,
    SUBCATEGORIES,
    TAXONOMY,
    World,
    WorldDataset,
    _short_caption,
    chain_graph,
    class_names,
    counterfactual_twin,
    draw_scene,
    render_scene,
    scene_sentences,
    scene_short_caption,
    sentence_prefixes,
    shade,
    shape_mask,
    taxonomy_graph,
    zeroshot_prompts,
)

REPO = Path(__file__).resolve().parents[1]
COLOUR_NAMES = [name for name, _ in COLOURS]


def fingerprint(seed: int, index: int, image_size: int) -> str:
    sample = World(seed, image_size).sample(index)
    digest = hashlib.sha256(sample.image.tobytes())
    for box in sample.boxes:
        digest.update(box.image.tobytes())
    digest.update(json.dumps(sample.texts(), sort_keys=True).encode())
    return digest.hexdigest()


def read_objects_from_pixels(pixels: np.ndarray) -> dict[str, str]:
    """Colour name -> position name, found from the pixels alone (exact palette matches)."""
    size = pixels.shape[0]
    edges = np.linspace(0, size, 4)
    found = {}
    for name, rgb in COLOURS:
        ys, xs = np.nonzero(np.all(pixels == np.asarray(rgb, dtype=np.uint8), axis=-1))
        if len(ys):
            row = int(np.searchsorted(edges, ys.mean(), side="right") - 1)
            col = int(np.searchsorted(edges, xs.mean(), side="right") - 1)
            found[name] = POSITIONS[3 * row + col]
    return found


def read_objects_from_caption(caption: str) -> dict[str, str]:
    """Colour name -> position name, parsed from the long description alone."""
    found = {}
    main = re.search(
        r"is (?:small|medium-sized|large) and (\w+), with .*?\. It sits in the (.+?)\.", caption
    )
    found[main.group(1)] = main.group(2)
    for colour, position in re.findall(
        r"(?:A|An) (?:small|medium-sized|large) (\w+) \w+ .+? is in the (.+?)\.", caption
    ):
        found[colour] = position
    return found


def test_same_seed_index_gives_identical_sample_across_processes():
    cases = [(3, 0, 64), (3, 17, 64), (11, 5, 32), (0, 2, 224)]
    code = (
        "import sys, json; sys.path.insert(0, {!r}); sys.path.insert(0, {!r})\n"
        "from test_world import fingerprint\n"
        "print(json.dumps([fingerprint(*c) for c in {!r}]))"
    ).format(str(REPO), str(REPO / "tests"), cases)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert json.loads(out.stdout) == [fingerprint(*c) for c in cases]


def test_sample_does_not_depend_on_global_rng_or_call_order():
    world = World(5, 64)
    first = world.sample(9)
    np.random.seed(123)
    torch.manual_seed(123)
    world.sample(3)
    again = World(5, 64).sample(9)
    assert first.image.tobytes() == again.image.tobytes()
    assert first.texts() == again.texts()
    assert World(6, 64).sample(9).texts() != first.texts()


@pytest.mark.parametrize("image_size", [32, 64, 224])
def test_caption_colours_and_positions_match_the_pixels(image_size):
    world = World(1, image_size)
    for index in range(60 if image_size < 224 else 15):
        sample = world.sample(index)
        assert read_objects_from_pixels(np.asarray(sample.image)) == read_objects_from_caption(
            sample.caption
        )


#: the article a lone letter takes, by the sound of its name ("an el", "a tee", "a you")
LETTER_ARTICLES = {"l": "an", "t": "a", "u": "a"}


def article(phrase: str) -> str:
    """The English article before ``phrase``, written out for the world's vocabulary."""
    word = phrase.split()[0]
    if len(word) == 1:
        return LETTER_ARTICLES[word]
    return "an" if word[0] in "aeiou" else "a"


def test_main_object_shape_in_pixels_is_its_sub_category():
    world = World(2, 64)
    for index in range(40):
        sample = world.sample(index)
        main = sample.meta["objects"][0]
        x0, y0, x1, y1 = main["box"]
        patch = np.asarray(sample.image)[y0:y1, x0:x1].astype(int)
        drawn = np.all(patch == main["rgb"], axis=-1) | np.all(patch == shade(main["rgb"]), axis=-1)
        expected = shape_mask(SUBCATEGORIES.index(main["sub"]), x1 - x0)
        assert np.array_equal(drawn, expected)
        assert f"more precisely {article(main['sub'])} {main['sub']}." in sample.caption


def test_shapes_are_distinct_and_pattern_shades_never_collide_with_colours():
    for side in range(6, 75):  # 6 px: a small shape at 32 px
        masks = {shape_mask(k, side).tobytes() for k in range(len(SUBCATEGORIES))}
        assert len(masks) == len(SUBCATEGORIES)
    palette = {rgb for _, rgb in COLOURS} | {rgb for _, rgb in BACKGROUNDS}
    shades = {shade(rgb) for _, rgb in COLOURS}
    assert len(shades) == len(COLOURS) and not shades & palette


def test_every_small_shape_shows_its_own_colour_under_every_pattern():
    scene = draw_scene(0, 0)
    for image_size in (32, 48, 64):
        for sub in range(len(SUBCATEGORIES)):
            for pattern in range(len(PATTERNS)):
                obj = replace(scene.objects[0], sub=sub, colour=3, size=0, pattern=pattern)
                pixels = render_scene(replace(scene, objects=(obj,)), image_size)
                assert np.all(pixels == COLOURS[3][1], axis=-1).any(), (image_size, sub, pattern)


def test_segments_are_cumulative_prefixes_and_caption_sizes():
    world = World(4, 64)
    counts = []
    for index in range(3000):
        sample = world.sample(index)
        segs = sample.segments
        assert segs[-1] == sample.caption and segs[0] == scene_sentences(world.scene(index))[0]
        for shorter, longer in zip(segs, segs[1:]):
            assert longer.startswith(shorter + " ")
        counts.append(len(sample.caption.split()))
    assert 60 <= min(counts) and max(counts) <= 150


def test_num_segments_cuts_evenly_and_rejects_too_many():
    sentences = [f"S{k}." for k in range(7)]
    segs = sentence_prefixes(sentences, 3)
    assert segs == [" ".join(sentences[:3]), " ".join(sentences[:5]), " ".join(sentences)]
    with pytest.raises(ValueError, match="num_segments"):
        sentence_prefixes(sentences, 8)
    sample = World(0, 64, num_segments=2).sample(0)
    assert len(sample.segments) == 2 and sample.segments[-1] == sample.caption


def test_chain_levels_refine_each_other():
    world = World(7, 64)
    parent_of = {child: parent for parent, child in taxonomy_graph()}
    for index in range(100):
        sample = world.sample(index)
        chain, facts = sample.chain, sample.meta["chain_facts"]
        assert len(chain) == 4 and len(facts) == 4
        for coarse, fine in zip(facts, facts[1:]):
            assert coarse.items() < fine.items()
        news = [facts[0]] + [dict(f.items() - c.items()) for c, f in zip(facts, facts[1:])]
        for text, new in zip(chain, news):
            assert new and all(value in text for value in new.values())
        main = sample.meta["objects"][0]
        assert parent_of[main["sub"]] == facts[1]["category"] == main["category"]
        assert parent_of[main["category"]] == facts[0]["super"] == main["super"]
    graph = chain_graph([world.sample(i) for i in range(20)])
    assert all(len(children) >= 1 for children in graph.values())


def test_boxes_are_crops_of_the_image_with_one_near_full_crop():
    world = World(8, 64)
    for index in range(30):
        sample = world.sample(index)
        pixels = np.asarray(sample.image)
        assert sample.meta["box_kinds"][-1] == "near_full"
        for box, truth in zip(sample.boxes, sample.meta["objects"] + [None]):
            x0, y0, x1, y1 = box.box
            assert np.array_equal(np.asarray(box.image), pixels[y0:y1, x0:x1])
            if truth is not None:
                article = "an" if truth["colour"][0] in "aeiou" else "a"
                assert (
                    box.phrase == f"{article} {truth['colour']} {truth['pattern']} {truth['sub']}"
                )
        short = sample.short_caption
        assert sample.boxes[-1].phrase == short[0].lower() + short[1:-1]
        x0, y0, x1, y1 = sample.boxes[-1].box
        assert (x1 - x0) * (y1 - y0) >= 0.8 * 64 * 64


def test_noise_sentences_are_irrelevant_to_every_image():
    vocab = set(COLOUR_NAMES) | set(PATTERNS) | set(SIZES) | {"shape", "background", "corner"}
    vocab |= {w for name in SUBCATEGORIES for w in name.split()} - {"a", "t", "l", "u", "x"}
    for sentence in NOISE_SENTENCES:
        assert not set(re.findall(r"[a-z-]+", sentence.lower())) & vocab, sentence
    noise = World(0, 64).sample(3).meta["noise_sentences"]
    assert len(set(noise)) == 3


def test_cola_pair_swaps_colour_bindings_in_pixels_and_text():
    world = World(9, 64)
    pairs = [p for p in (world.cola_pair(i) for i in range(30)) if p is not None]
    assert len(pairs) >= 10
    for first, second in pairs:
        query = first.meta["cola"]
        assert second.meta["cola"]["caption"] == query["swapped_caption"]
        i, j = query["objects"]
        a, b = first.meta["objects"][i], first.meta["objects"][j]
        seen_first = read_objects_from_pixels(np.asarray(first.image))
        seen_second = read_objects_from_pixels(np.asarray(second.image))
        assert seen_first[a["colour"]] == seen_second[b["colour"]] == a["position"]
        assert seen_first[b["colour"]] == seen_second[a["colour"]] == b["position"]
        assert query["caption"].split(" and ")[0].endswith(f"{a['colour']} {a['sub']}")


def test_zero_shot_names_prompts_and_labels():
    assert [len(class_names(k)) for k in (1, 2, 3)] == [4, 12, 24]
    assert len(taxonomy_graph()) == 12 + 24
    prompts = zeroshot_prompts(2)
    assert "An ellipse next to other shapes." in prompts["ellipse"]
    assert "A large ellipse." in prompts["ellipse"]
    with pytest.raises(ValueError, match="level"):
        class_names(4)
    for index in range(20):
        sample = World(3, 64).sample(index)
        main = sample.meta["objects"][0]
        names = [class_names(k + 1)[i] for k, i in enumerate(sample.meta["labels"])]
        assert names == [main["super"], main["category"], main["sub"]]
        assert main["sub"] in TAXONOMY[main["super"]][main["category"]]
        assert class_names(3)[sample.label] == main["sub"]


def test_world_rejects_bad_sizes():
    with pytest.raises(ValueError, match="image_size"):
        World(0, 16)
    with pytest.raises(ValueError, match="max_objects"):
        World(0, 64, min_objects=3, max_objects=2).sample(0)


def test_world_dataset_batches_through_a_dataloader():
    dataset = WorldDataset(seed=1, size=10, image_size=32)
    batch = next(iter(DataLoader(dataset, batch_size=5, collate_fn=collate_samples)))
    assert batch["image"].shape == (5, 3, 32, 32) and batch["box_image"].shape == (5, 3, 32, 32)
    assert batch["labels"].shape == (5, 3) and batch["skipped"] == 0
    sample = World(1, 32).sample(2)
    assert batch["caption"][2] == sample.caption and batch["chain"][2] == sample.chain
    expected = torch.from_numpy(np.asarray(sample.image).copy()).permute(2, 0, 1) / 255
    assert torch.equal(batch["image"][2], expected)
    with pytest.raises(IndexError):
        dataset[10]


@pytest.mark.parametrize("objects", [(1, 4), (1, 1), (4, 4)])
def test_main_object_is_strictly_the_largest(objects):
    main_sizes, other_sizes = set(), set()
    for index in range(500):
        scene = draw_scene(3, index, *objects)
        main, others = scene.objects[0], scene.objects[1:]
        assert objects[0] <= len(scene.objects) <= objects[1]
        assert main.size in (1, 2) and all(o.size < main.size for o in others)
        assert len({o.colour for o in scene.objects}) == len(scene.objects)
        assert len({o.cell for o in scene.objects}) == len(scene.objects)
        main_sizes.add(main.size)
        other_sizes |= {o.size for o in others if main.size == 2}
    assert main_sizes == {1, 2}
    assert other_sizes == ({0, 1} if objects[1] > 1 else set())
    sample = World(2, 64, min_objects=objects[0], max_objects=objects[1]).sample(0)
    areas = [(b[2] - b[0]) * (b[3] - b[1]) for b in (o["box"] for o in sample.meta["objects"])]
    assert all(area < areas[0] for area in areas[1:])


def test_name_level_is_drawn_with_the_stated_odds():
    levels = np.array([draw_scene(0, index).name_level for index in range(4000)])
    fractions = [float(np.mean(levels == level)) for level in (1, 2, 3)]
    assert np.allclose(fractions, [0.25, 0.25, 0.5], atol=0.03), fractions
    sample = World(0, 32).sample(5)
    assert sample.meta["name_level"] == draw_scene(0, 5).name_level


def test_short_caption_is_short_varied_and_names_every_object():
    scenes = [draw_scene(0, index) for index in range(2000)]
    captions = [scene_short_caption(scene) for scene in scenes]
    longest = max(len(c.split()) for c in captions)
    assert longest <= MAX_SHORT_WORDS == 20, longest
    distinct = len(set(captions[:1000])) / 1000
    assert distinct >= 0.9, distinct
    for scene, caption in zip(scenes, captions):
        main, others = scene.objects[0], scene.objects[1:]
        level = scene.name_level
        name = class_names(level)[(main.super, main.category, main.sub)[level - 1]]
        assert re.search(rf"\b{COLOURS[main.colour][0]} (\w+ )?{re.escape(name)}\b", caption)
        for obj in others:
            assert f"{COLOURS[obj.colour][0]} {SUBCATEGORIES[obj.sub]}" in caption
        assert caption.startswith(("A ", "An ")) and caption.endswith(".")
    sized = np.mean([c.split()[1] == SIZES[s.objects[0].size] for s, c in zip(scenes, captions)])
    backed = np.mean([BACKGROUNDS[s.background][0] in c for s, c in zip(scenes, captions)])
    assert sized >= 0.75 and backed >= 0.8, (sized, backed)
    world = World(0, 32)
    for index in range(30):
        sample = world.sample(index)
        assert sample.short_caption == captions[index]
        assert sample.short_caption != scene_sentences(scenes[index])[0]


def test_short_caption_wording_and_what_gives_way():
    scene = draw_scene(0, 0)
    disc = replace(scene.objects[0], sub=0, colour=0, size=2, pattern=1, cell=4)
    ring = replace(disc, sub=1, colour=5, size=0, pattern=0, cell=3)
    scene = replace(scene, objects=(disc, ring), background=1, name_level=3)
    caption = "A large red striped disc next to a blue ring on a beige background."
    assert scene_short_caption(scene) == caption
    assert scene_short_caption(replace(scene, objects=(disc,), name_level=1)) == (
        "A large red striped round shape on a beige background."
    )
    long_names = [SUBCATEGORIES.index(n) for n in ("upside-down t shape", "thin plus sign")]
    crowd = tuple(replace(ring, sub=long_names[k % 2], colour=k, cell=k) for k in range(1, 4))
    busy = replace(scene, objects=(replace(disc, sub=long_names[0]),) + crowd, background=2)
    caption = scene_short_caption(busy)  # everything that can give way has to: 19 words
    assert caption == (
        "A red upside-down t shape with orange thin plus sign, yellow upside-down t shape and "
        "green thin plus sign."
    )
    two = replace(busy, objects=busy.objects[:3])  # only "on a pale blue background" shortens
    assert scene_short_caption(two).endswith(" and a yellow upside-down t shape on pale blue.")


def test_prompts_follow_the_short_caption_wording():
    assert 4 <= len(PROMPT_TEMPLATES) <= 6
    for level in (1, 2, 3):
        for name, prompts in zeroshot_prompts(level).items():
            assert len(prompts) == len(PROMPT_TEMPLATES)
            for prompt in prompts:
                assert prompt.count(name) == 1 and prompt.endswith(".")
                first, rest = prompt.split(" ", 1)
                if first in ("A", "An"):
                    assert first.lower() == article(rest), prompt
    matched = 0
    for index in range(300):
        sample = World(0, 32).sample(index)
        level = sample.meta["name_level"]
        main = sample.meta["objects"][0]
        words = sample.short_caption.split()
        if words[1] != main["size"]:
            continue  # the size word gave way in this caption
        drop = {main["colour"], main["pattern"]}
        stem = " ".join(words[:2] + [w for w in words[2:4] if w not in drop] + words[4:])
        name = class_names(level)[sample.meta["labels"][level - 1]]
        assert any(
            stem.startswith(p[:-1] + " ") or stem == p for p in zeroshot_prompts(level)[name]
        )
        matched += 1
    assert matched >= 200, matched


def _without(name: str, caption: str) -> str:
    """``caption`` with the first whole-word ``name`` replaced by a placeholder."""
    return re.sub(rf"\b{name}\b", "#", caption, count=1)


def test_counterfactual_twin_changes_only_the_main_shape_and_its_name():
    world, same = World(4, 32), 0
    for index in range(60):
        scene = world.scene(index)
        twin = counterfactual_twin(scene, 4, index)
        main, other = scene.objects[0], twin.objects[0]
        assert other.super != main.super  # so the name differs at every naming level
        assert replace(other, sub=main.sub) == main and twin.objects[1:] == scene.objects[1:]
        assert (twin.background, twin.texture, twin.name_level) == (
            scene.background,
            scene.texture,
            scene.name_level,
        )
        level = scene.name_level
        name, twin_name = (
            class_names(level)[(o.super, o.category, o.sub)[level - 1]] for o in (main, other)
        )
        for k in range(len(SHORT_CAPTION_DROPS) + 1):  # same wording at every drop level
            caption = _short_caption(scene, SHORT_CAPTION_DROPS[:k])
            twin_caption = _short_caption(twin, SHORT_CAPTION_DROPS[:k])
            assert _without(name, caption) == _without(twin_name, twin_caption)
        caption, twin_caption = scene_short_caption(scene), scene_short_caption(twin)
        same += _without(name, caption) == _without(twin_name, twin_caption)
        pixels, twin_pixels = render_scene(scene, 32), render_scene(twin, 32)
        x0, y0, x1, y1 = world.sample(index).meta["objects"][0]["box"]
        outside = np.ones((32, 32), bool)
        outside[y0:y1, x0:x1] = False
        assert np.array_equal(pixels[outside], twin_pixels[outside])  # only the main cell changes
        assert not np.array_equal(pixels, twin_pixels)
    assert same >= 45  # the rest: a longer or shorter name moves the 20-word limit's drops
    supers = {counterfactual_twin(world.scene(i), 4, i).objects[0].super for i in range(60)}
    assert len(supers) == 4


def test_twin_dataset_pairs_each_scene_with_its_twin_in_one_batch():
    from paperlib.engine.data import GlobalBatchSampler

    dataset = WorldDataset(seed=2, size=40, image_size=32, twins=True)
    world = World(2, 32)
    assert dataset[6]["short_caption"] == world.sample(6).short_caption
    assert dataset[7]["short_caption"] == world.twin_sample(6).short_caption
    assert dataset[7]["short_caption"] != dataset[6]["short_caption"]
    sampler = GlobalBatchSampler(40, 8, seed=1, group=2)
    for step in range(10):  # crosses epochs
        batch = sampler.global_indices(step)
        assert len(set(batch)) == 8 and all(i ^ 1 in batch for i in batch)
    plain, grouped = GlobalBatchSampler(40, 8, seed=1), GlobalBatchSampler(40, 8, seed=1, group=1)
    assert plain.global_indices(3) == grouped.global_indices(3)
    with pytest.raises(ValueError, match="group size 2"):
        GlobalBatchSampler(40, 6, world_size=2, group=2)


def test_articles_follow_the_sound_of_the_next_word():
    """ "a u shape" (the letter's name is "you"), "an l shape", "an upright square"."""
    world = World(seed=0, image_size=32)
    texts = [
        text
        for i in range(120)
        for s in [world.sample(i)]
        for text in (s.caption, s.short_caption, *s.chain, *(b.phrase for b in s.boxes))
    ]
    joined = " ".join(t.lower() for t in texts)

    def count(phrase: str) -> int:
        return len(re.findall(rf"\b{phrase}\b", joined))

    assert count("a u shape") > 0 and count("an u shape") == 0
    assert count("an l shape") > 0 and count("a l shape") == 0
    assert count("an upright") > 0 and count("a upright") == 0
