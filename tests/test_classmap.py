"""Class-name maps: every format, and the bijection rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from labelgate import ClassMap, ClassMapError, load_class_map


class TestFormats:
    def test_txt_index_is_line_number(self, tmp_path: Path) -> None:
        p = tmp_path / "c.txt"
        p.write_text("World\nSports\nBusiness\nSci/Tech\n")
        m = load_class_map(p)
        assert m.name_of() == {0: "World", 1: "Sports", 2: "Business", 3: "Sci/Tech"}
        assert m.problems(4) == []

    def test_txt_trailing_blank_line_is_no_class(self, tmp_path: Path) -> None:
        p = tmp_path / "labels.txt"
        p.write_text("a\nb\n\n")
        m = load_class_map(p)
        assert len(m.entries) == 2
        (problem,) = m.problems(2)
        assert "blank line" in problem and "extra, empty class" in problem

    def test_json_list_and_mappings(self, tmp_path: Path) -> None:
        for text in (
            '["a", "b"]',
            '{"0": "a", "1": "b"}',
            '{"a": 0, "b": 1}',
            '{"names": ["a", "b"]}',
        ):
            p = tmp_path / "c.json"
            p.write_text(text)
            assert load_class_map(p).name_of() == {0: "a", 1: "b"}, text

    def test_yaml(self, tmp_path: Path) -> None:
        p = tmp_path / "c.yaml"
        p.write_text("names:\n  0: person\n  1: cat\n")
        assert load_class_map(p).name_of() == {0: "person", 1: "cat"}

    def test_yolo_data_yaml_names_beside_other_keys(self, tmp_path: Path) -> None:
        p = tmp_path / "data.yaml"
        p.write_text(
            "path: ../datasets/coco8\ntrain: images/train\nval: images/val\nnc: 3\n"
            "names: [person, bicycle]\n"
        )
        found = load_class_map(p)
        assert found.name_of() == {0: "person", 1: "bicycle"} and found.declared == 3
        assert f"{p} states 3 classes and names 2" in found.problems(2)
        p.write_text("nc: 2\nnames:\n  0: person\n  1: bicycle\n")
        assert load_class_map(p).problems(2) == []

    def test_ultralytics_coco_yaml_as_class_names(self, shared_real_world: Path) -> None:
        found = load_class_map(shared_real_world / "annotations/yolo/ultralytics_coco8.yaml")
        assert len(found.entries) == 80 and found.name_of()[79] == "toothbrush"
        assert found.problems(80) == []

    def test_csv_with_and_without_header(self, tmp_path: Path) -> None:
        for text in ("index,name\n0,a\n1,b\n", "0,a\n1,b\n"):
            p = tmp_path / "c.csv"
            p.write_text(text)
            assert load_class_map(p).name_of() == {0: "a", 1: "b"}

    @pytest.mark.parametrize(
        ("name", "text"),
        [
            ("c.json", "[1, 2]"),
            ("c.json", "{bad"),
            ("c.csv", "a,b\nx,y\n"),
            ("c.txt", "\n\n"),
            ("c.yaml", "a: [b"),
            ("c.json", "7"),
        ],
    )
    def test_unreadable(self, tmp_path: Path, name: str, text: str) -> None:
        p = tmp_path / name
        p.write_text(text)
        with pytest.raises(ClassMapError) as err:
            load_class_map(p)
        assert str(p) in str(err.value)


class TestDetectionMaps:
    """TF Object Detection label maps (.pbtxt) and keras-retinanet's class_name,id files."""

    def test_pbtxt_items_in_file_order(self, tmp_path: Path) -> None:
        path = tmp_path / "label_map.pbtxt"
        path.write_text(
            '# a comment\nitem { name: "/m/01g317" id: 1 display_name: "person" }\n'
            "item: { id: 2, name: 'b\\x41c' keypoints { id: 0 label: \"nose\" } }\n"
            "item < name: 'background' id: 0 >\n"
        )
        assert load_class_map(path).entries == ((1, "/m/01g317"), (2, "bAc"), (0, "background"))

    @pytest.mark.parametrize(
        ("text", "says"),
        [
            ("item { id: 0 name: 'cat' }", "reserves for the background"),
            ("item { id: -1 name: 'cat' }", "negative id"),
            ("item { name: 'cat' }", "no integer id"),
            ("item { id: 1 name: 'cat'", "not closed"),
            ("name: 'x'", "no item"),
            ("@@", "not protobuf text at line 1"),
        ],
    )
    def test_pbtxt_refusals_name_no_content(self, tmp_path: Path, text: str, says: str) -> None:
        path = tmp_path / "label_map.pbtxt"
        path.write_text(text)
        with pytest.raises(ClassMapError, match=says) as err:
            load_class_map(path)
        assert "'cat'" not in str(err.value)

    def test_csv_name_index_with_a_header(self, tmp_path: Path) -> None:
        path = tmp_path / "classes.csv"
        path.write_text("class_name,id\ncow,0\ncat,1\n")
        assert load_class_map(path).entries == ((0, "cow"), (1, "cat"))
        path.write_text("cow,0\ncat,x\n")
        with pytest.raises(ClassMapError, match="row 2 is not 'name,index'"):
            load_class_map(path)


class TestBijection:
    def test_duplicate_after_normalising(self) -> None:
        m = ClassMap.from_names(["cat", "dog", "Cat ", "fish"])
        assert m.problems(4) == ["name 'cat' appears at indices 0, 2"]

    def test_count_and_missing_and_duplicate_index(self) -> None:
        m = ClassMap(((0, "a"), (0, "b"), (2, "c"), (7, "d")))
        problems = m.problems(4)
        assert "index 0 is given 2 names" in problems
        assert "indices outside 0..3: 7" in problems
        assert "no name for indices 1, 3" in problems
        assert ClassMap.from_names(["a", "b", "c"]).problems(4) == [
            "the map has 3 entries for 4 classes",
            "no name for indices 3",
        ]

    def test_empty_name(self) -> None:
        assert ClassMap.from_names(["a", " ", "c"]).problems(3) == ["empty class name at index 1"]


def test_placeholders_follow_a_renumbering() -> None:
    """A COCO grouping category at id 5 is the placeholder at the index a reading gives id 5; a
    reading that keeps no index for it (ultralytics' ``id - 1`` of id 0: -1) drops it."""
    m = ClassMap(((5, "fish"), (7, "cod"), (9, "eel")), placeholders=frozenset({5}))
    assert m.placeholders_at({5: 0, 7: 1, 9: 2}) == {0}
    assert m.placeholders_at({5: -1, 7: 6, 9: 8}) == frozenset()
    assert m.placeholders_at({7: 0, 9: 1}) == frozenset()  # mmdet: not in metainfo.classes


def test_a_csv_with_a_lone_carriage_return_is_a_class_map_error(tmp_path: Path) -> None:
    path = tmp_path / "classes.csv"
    path.write_bytes(b"\r0")  # found by the class-map fuzz test: the csv module raised
    with pytest.raises(ClassMapError):
        load_class_map(path)


def test_a_class_named_as_the_placeholders_is_a_duplicate_name() -> None:
    """The placeholders share their name by design; a class of that name makes it ambiguous."""
    gaps = ClassMap(((0, "N/A"), (1, "cat"), (2, "N/A")), placeholders=frozenset({0, 2}))
    assert gaps.problems(3) == []
    clash = ClassMap(((0, "N/A"), (1, "N/A"), (2, "dog")), placeholders=frozenset({0}))
    assert clash.problems(3) == ["name 'N/A' appears at indices 0, 1"]
