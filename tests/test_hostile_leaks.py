"""Hostile inputs, round three: no content of a file the user did not mean as labels reaches any
output. Each secret below is a marker that must appear in no output of the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from labelgate import ClassMapError, load_class_map
from labelgate.io.uri import display_uri, scrub_uris
from tests.conftest import SAMPLES
from tests.limits import assert_clean_exit, run_bounded

SECRET = "s3cr3tVALUE"
CLEAN = str(SAMPLES / "clean.parquet")


def shown(result: object) -> str:
    return str(getattr(result, "stdout", "")) + str(getattr(result, "stderr", ""))


LEAKY_MAPS = {
    "registry.json": '{"auths": {"registry.example.com": {"auth": "%s"}}}',
    "creds.csv": "User name,Password,Access key ID,Secret access key\nbob,%s,AKIAX,y\n",
    "keys.csv": "alice,%s\n",
    "secrets.yaml": "db_user: admin\ndb_password: %s\n",
    "flat.yaml": "user: admin\nhost: %s\n",
    "broken.yaml": "names: [a, b\npassword: %s\n",
    "env.txt": "HOME=/root\nAPI_TOKEN=%s\n",
    "gitconfig.txt": '[http "https://example.com/"]\n\textraheader = AUTHORIZATION: basic %s\n',
    "passwd.txt": "root:x:0:0:root:/root:/bin/bash\nbob:x:1000:1000:%s:/home/bob:/bin/sh\n",
    "header.txt": "cat\nAuthorization: Bearer %s\n",
    "names.json": '{"names": {"password": "%s"}}',
}


class TestClassMapsAreNotEchoed:
    @pytest.mark.parametrize("name", sorted(LEAKY_MAPS))
    def test_as_class_names(self, tmp_path: Path, name: str) -> None:
        path = tmp_path / name
        path.write_text(LEAKY_MAPS[name] % SECRET)
        r = run_bounded("validate", CLEAN, "-k", "4", "--class-names", str(path))
        assert_clean_exit(r, 2)
        assert SECRET not in shown(r), shown(r)

    @pytest.mark.parametrize("name", ["registry.json", "creds.csv", "secrets.yaml"])
    def test_named_by_a_contract(self, tmp_path: Path, name: str) -> None:
        (tmp_path / name).write_text(LEAKY_MAPS[name] % SECRET)
        contract = tmp_path / "c.yaml"
        contract.write_text(f"num_classes: 4\nclass_names: {name}\n")
        r = run_bounded("validate", CLEAN, "--schema", str(contract))
        assert_clean_exit(r, 2)
        assert SECRET not in shown(r)

    def test_as_a_yolo_data_yaml_link(self, tmp_path: Path) -> None:
        secrets = tmp_path / "secrets.yaml"
        secrets.write_text(LEAKY_MAPS["secrets.yaml"] % SECRET)
        root = tmp_path / "yolo"
        (root / "labels").mkdir(parents=True)
        (root / "labels" / "a.txt").write_text("0 0.5 0.5 0.1 0.1\n")
        (root / "data.yaml").symlink_to(secrets)
        r = run_bounded("validate", str(root))
        assert_clean_exit(r, 2)
        assert SECRET not in shown(r)

    @pytest.mark.parametrize("target", ["gitconfig", "/etc/passwd"])
    def test_a_link_is_judged_by_its_target(self, tmp_path: Path, target: str) -> None:
        if target == "gitconfig":
            real = tmp_path / ".gitconfig"
            real.write_text(f"[http]\n\textraheader = AUTHORIZATION: basic {SECRET}\n")
            target = str(real)
        link = tmp_path / "labels.txt"
        link.symlink_to(target)
        r = run_bounded("validate", CLEAN, "-k", "4", "--class-names", str(link))
        assert_clean_exit(r, 2)
        assert "a link to a file that is not" in r.stderr
        assert SECRET not in shown(r) and "root:x" not in shown(r)

    def test_a_content_addressed_blob_is_still_a_class_map(self, tmp_path: Path) -> None:
        blob = tmp_path / "blobs" / ("ab" * 32)
        blob.parent.mkdir()
        blob.write_text("cat\ndog\n")
        link = tmp_path / "classes.txt"
        link.symlink_to(blob)
        assert load_class_map(link).name_of() == {0: "cat", 1: "dog"}

    @pytest.mark.parametrize(
        "names",
        [
            "person\nbicycle\ncar\n",
            "B-PER\nI-PER\nO\n",
            "secretary bird\ntoken\nauth\n",
            "a: b\nc\n",  # a colon pair whose key names no credential
            "[UNK]\n[CLS]\n",
        ],
    )
    def test_real_class_names_still_read(self, tmp_path: Path, names: str) -> None:
        path = tmp_path / "classes.txt"
        path.write_text(names)
        assert len(load_class_map(path).entries) == names.count("\n")

    def test_errors_name_positions(self, tmp_path: Path) -> None:
        path = tmp_path / "m.json"
        path.write_text('{"zebra": "' + SECRET + '"}')
        with pytest.raises(ClassMapError, match=r"entry 1 \(a str\) is neither") as caught:
            load_class_map(path)
        assert SECRET not in str(caught.value) and "zebra" not in str(caught.value)


class TestUris:
    @pytest.mark.parametrize(
        ("uri", "display"),
        [
            ("s3://KEY:SECRET@bucket/a.parquet", "s3://bucket/a.parquet"),
            ("gs://tok@bucket/a?x=1", "gs://bucket/a"),
            ("https://u:p@host:8080/x.csv?sig=abc", "https://host:8080/x.csv"),
            ("/data/user@host/a.parquet", "/data/user@host/a.parquet"),
        ],
    )
    def test_display(self, uri: str, display: str) -> None:
        assert display_uri(uri) == display

    def test_scrub_inside_a_message(self) -> None:
        text = "cannot open s3://AK:SE@b/k.parquet (from 's3://AK:SE@b/k.parquet?region=x')"
        assert scrub_uris(text) == "cannot open s3://b/k.parquet (from 's3://b/k.parquet')"

    def test_credentials_in_a_uri_never_reach_stderr(self) -> None:
        uri = f"s3://AKIAKEY:{SECRET}@bucket/x.parquet?endpoint_override=127.0.0.1:9&scheme=http"
        r = run_bounded(
            "validate", uri, "-k", "4", env={"AWS_EC2_METADATA_DISABLED": "true"}, timeout=60
        )
        assert_clean_exit(r, 2)
        assert SECRET not in shown(r) and "AKIAKEY" not in shown(r)


@pytest.mark.parametrize("how", ["link", "copy"])
def test_a_voc_labelmap_that_is_a_passwd_file(tmp_path: Path, how: str) -> None:
    import shutil

    root = tmp_path / "voc"
    shutil.copytree(SAMPLES / "formats" / "voc_good", root)
    for p in root.glob("*.txt"):
        p.unlink()
    passwd = tmp_path / "passwd"
    passwd.write_text(f"root:x:0:0:root:/root:/bin/bash\n{SECRET}:x:1000:1000::/home:/bin/sh\n")
    labelmap = root / "labelmap.txt"
    if how == "link":
        labelmap.symlink_to(passwd)
    else:
        shutil.copy(passwd, labelmap)
    r = run_bounded("validate", str(root), "--input-format", "voc", "-k", "4")
    assert_clean_exit(r, 2)
    assert SECRET not in shown(r) and "root" not in r.stdout


def test_a_name_to_index_map_may_name_anything(tmp_path: Path) -> None:
    path = tmp_path / "label2id.json"
    path.write_text('{"O": 0, "B-TOKEN": 1, "I-TOKEN": 2}')
    assert load_class_map(path).name_of() == {0: "O", 1: "B-TOKEN", 2: "I-TOKEN"}
