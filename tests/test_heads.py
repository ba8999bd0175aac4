"""The head finder on modules built to torchvision's, timm's and Hugging Face's layouts.

torchvision does not load with this CPU torch build and timm is not installed, so each model is
rebuilt here from plain torch layers with the parameter names and shapes of the library's source
(files named in docs/resume.md); the finder reads names and shapes only.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labelgate.errors import LabelError
from labelgate.training.heads import find_head

torch = pytest.importorskip("torch")
nn = torch.nn


def shapes(module: nn.Module) -> dict[str, tuple[int, ...]]:
    return {k: tuple(v.shape) for k, v in module.state_dict().items()}


def tree(**children: nn.Module) -> nn.Module:
    m = nn.Module()
    for name, child in children.items():
        m.add_module(name, child)
    return m


def conv_norm(c_in: int, c_out: int, **kw: int) -> nn.Sequential:
    """torchvision's Conv2dNormActivation: conv (no bias), norm, activation."""
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, 3, padding=1, bias=False, **kw), nn.BatchNorm2d(c_out), nn.ReLU()
    )


def faster_rcnn(num_classes: int) -> nn.Module:
    """faster_rcnn.py: RPNHead (cls_logits, bbox_pred), TwoMLPHead, FastRCNNPredictor."""
    anchors = 3
    rpn = tree(
        head=tree(
            conv=nn.Sequential(nn.Conv2d(8, 8, 3, padding=1)),
            cls_logits=nn.Conv2d(8, anchors, 1),
            bbox_pred=nn.Conv2d(8, anchors * 4, 1),
        )
    )
    roi_heads = tree(
        box_head=tree(fc6=nn.Linear(8, 16), fc7=nn.Linear(16, 16)),
        box_predictor=tree(
            cls_score=nn.Linear(16, num_classes), bbox_pred=nn.Linear(16, num_classes * 4)
        ),
    )
    return tree(backbone=tree(body=nn.Conv2d(3, 8, 3)), rpn=rpn, roi_heads=roi_heads)


def retinanet(num_classes: int, anchors: int = 9) -> nn.Module:
    """retinanet.py: RetinaNetClassificationHead / RetinaNetRegressionHead."""
    cls = tree(
        conv=nn.Sequential(*[conv_norm(8, 8) for _ in range(4)]),
        cls_logits=nn.Conv2d(8, anchors * num_classes, 3, padding=1),
    )
    reg = tree(
        conv=nn.Sequential(*[conv_norm(8, 8) for _ in range(4)]),
        bbox_reg=nn.Conv2d(8, anchors * 4, 3, padding=1),
    )
    return tree(
        backbone=nn.Conv2d(3, 8, 3), head=tree(classification_head=cls, regression_head=reg)
    )


def fcos(num_classes: int) -> nn.Module:
    """fcos.py: FCOSClassificationHead (one anchor per location), FCOSRegressionHead."""
    cls = tree(conv=nn.Sequential(conv_norm(8, 8)), cls_logits=nn.Conv2d(8, num_classes, 3))
    reg = tree(
        conv=nn.Sequential(conv_norm(8, 8)),
        bbox_reg=nn.Conv2d(8, 4, 3),
        bbox_ctrness=nn.Conv2d(8, 1, 3),
    )
    return tree(head=tree(classification_head=cls, regression_head=reg))


def ssd(num_classes: int, anchors: Sequence[int] = (4, 6, 6, 6, 4, 4)) -> nn.Module:
    """ssd.py: SSDClassificationHead / SSDRegressionHead, one Conv2d per feature level."""
    cls = tree(module_list=nn.ModuleList(nn.Conv2d(8, a * num_classes, 3) for a in anchors))
    reg = tree(module_list=nn.ModuleList(nn.Conv2d(8, a * 4, 3) for a in anchors))
    return tree(
        backbone=nn.Conv2d(3, 8, 3), head=tree(classification_head=cls, regression_head=reg)
    )


def ssdlite(num_classes: int, anchors: Sequence[int] = (6, 6)) -> nn.Module:
    """ssdlite.py: _prediction_block = depthwise Conv2dNormActivation, then a 1x1 Conv2d."""

    def block(out: int) -> nn.Sequential:
        return nn.Sequential(conv_norm(8, 8, groups=8), nn.Conv2d(8, out, 1))

    cls = tree(module_list=nn.ModuleList(block(a * num_classes) for a in anchors))
    reg = tree(module_list=nn.ModuleList(block(a * 4) for a in anchors))
    return tree(head=tree(classification_head=cls, regression_head=reg))


def fcn_head(c_in: int, k: int) -> nn.Sequential:
    """fcn.py FCNHead: Conv, BN, ReLU, Dropout, Conv(k) -> the classifier is index 4."""
    return nn.Sequential(
        nn.Conv2d(c_in, 4, 3, padding=1, bias=False),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.Dropout(0.1),
        nn.Conv2d(4, k, 1),
    )


def deeplabv3(k: int) -> nn.Module:
    """deeplabv3.py DeepLabHead: ASPP, Conv, BN, ReLU, Conv(k); aux_classifier an FCNHead."""
    aspp = tree(convs=nn.ModuleList([conv_norm(8, 4)]), project=nn.Sequential(nn.Conv2d(4, 4, 1)))
    classifier = nn.Sequential(
        aspp, nn.Conv2d(4, 4, 3, bias=False), nn.BatchNorm2d(4), nn.ReLU(), nn.Conv2d(4, k, 1)
    )
    return tree(backbone=nn.Conv2d(3, 8, 3), classifier=classifier, aux_classifier=fcn_head(8, k))


class TestTorchvisionDetection:
    def test_faster_rcnn_takes_cls_score_not_bbox_pred(self) -> None:
        found = find_head(shapes(faster_rcnn(5)))
        assert found.chosen.name == "roi_heads.box_predictor.cls_score"
        assert (found.chosen.outputs, found.chosen.classes) == (5, 5)
        assert found.chosen.background
        names = {c.name for c in found.candidates}
        assert "rpn.head.cls_logits" in names  # reported, not chosen

    def test_retinanet_divides_the_anchors_out(self) -> None:
        found = find_head(shapes(retinanet(7, anchors=9)))
        assert found.chosen.name == "head.classification_head.cls_logits"
        assert (found.chosen.outputs, found.chosen.classes) == (63, 7)

    def test_fcos_has_one_anchor(self) -> None:
        found = find_head(shapes(fcos(11)))
        assert (found.chosen.name, found.chosen.classes) == (
            "head.classification_head.cls_logits",
            11,
        )

    def test_ssd_reads_each_level_by_its_regression_twin(self) -> None:
        found = find_head(shapes(ssd(21)))
        assert found.chosen.name == "head.classification_head.module_list.0"
        assert (found.chosen.outputs, found.chosen.classes) == (84, 21)

    def test_ssdlite_takes_the_last_conv_of_a_level(self) -> None:
        found = find_head(shapes(ssdlite(3)))
        assert found.chosen.name == "head.classification_head.module_list.0.1"
        assert found.chosen.classes == 3

    def test_mismatched_anchors_are_named(self) -> None:
        state = shapes(retinanet(7, anchors=9))
        state["head.regression_head.bbox_reg.weight"] = (8 * 4, 8, 3, 3)
        with pytest.raises(LabelError, match="not a multiple of its 8 anchors"):
            find_head(state)


class TestSegmentation:
    def test_deeplab_takes_classifier_4_not_the_aux(self) -> None:
        found = find_head(shapes(deeplabv3(21)))
        assert (found.chosen.name, found.chosen.classes) == ("classifier.4", 21)
        assert "aux_classifier.4" in {c.name for c in found.candidates}

    def test_lraspp_takes_the_high_classifier(self) -> None:
        """lraspp.py LRASPPHead: cbr, scale, low_classifier, high_classifier (1x1 convs)."""
        head = tree(
            cbr=conv_norm(8, 4),
            low_classifier=nn.Conv2d(8, 9, 1),
            high_classifier=nn.Conv2d(4, 9, 1),
        )
        found = find_head(shapes(tree(backbone=nn.Conv2d(3, 8, 3), classifier=head)))
        assert (found.chosen.name, found.chosen.classes) == ("classifier.high_classifier", 9)

    def test_fcn(self) -> None:
        model = tree(
            backbone=nn.Conv2d(3, 8, 3), classifier=fcn_head(8, 6), aux_classifier=fcn_head(8, 6)
        )
        assert find_head(shapes(model)).chosen.name == "classifier.4"


class TestClassifiers:
    @pytest.mark.parametrize(
        ("model", "expected"),
        [
            (tree(conv1=nn.Conv2d(3, 8, 3), fc=nn.Linear(8, 10)), "fc"),  # resnet
            (tree(blocks=nn.Linear(8, 8), head=nn.Linear(8, 10)), "head"),  # timm ViT
            (
                tree(stages=nn.Linear(8, 8), head=tree(norm=nn.LayerNorm(8), fc=nn.Linear(8, 10))),
                "head.fc",
            ),  # timm ConvNeXt
            (
                tree(conv_head=nn.Conv2d(8, 8, 1), classifier=nn.Linear(8, 10)),
                "classifier",
            ),  # timm EfficientNet
            (
                tree(
                    features=nn.Conv2d(3, 8, 3),
                    classifier=nn.Sequential(
                        nn.Linear(8, 8), nn.ReLU(), nn.Dropout(), nn.Linear(8, 10)
                    ),
                ),
                "classifier.3",
            ),  # torchvision MobileNetV3
            (
                tree(encoder=nn.Linear(8, 8), heads=tree(head=nn.Linear(8, 10))),
                "heads.head",
            ),  # torchvision ViT
        ],
    )
    def test_vision_classifiers(self, model: nn.Module, expected: str) -> None:
        found = find_head(shapes(model))
        assert (found.chosen.name, found.chosen.classes) == (expected, 10)

    def test_hf_bert_roberta_llama(self) -> None:
        bert = tree(bert=tree(pooler=tree(dense=nn.Linear(8, 8))), classifier=nn.Linear(8, 3))
        roberta = tree(
            roberta=tree(encoder=nn.Linear(8, 8)),
            classifier=tree(dense=nn.Linear(8, 8), out_proj=nn.Linear(8, 3)),
        )
        llama = tree(model=tree(norm=nn.LayerNorm(8)), score=nn.Linear(8, 3, bias=False))
        assert find_head(shapes(bert)).chosen.name == "classifier"
        assert find_head(shapes(roberta)).chosen.name == "classifier.out_proj"
        assert find_head(shapes(llama)).chosen.name == "score"  # no bias: found by name

    def test_a_lightning_prefix_is_kept(self) -> None:
        state = {f"model.{k}": v for k, v in shapes(faster_rcnn(4)).items()}
        assert find_head(state).chosen.name == "model.roi_heads.box_predictor.cls_score"

    def test_head_overrides_and_is_read_by_its_family(self) -> None:
        state = shapes(retinanet(5, anchors=9))
        assert find_head(state, head="head.regression_head.bbox_reg").chosen.classes == 36
        chosen = find_head(state, head="head.classification_head.cls_logits").chosen
        assert chosen.classes == 5
        with pytest.raises(LabelError, match="no head 'nope'"):
            find_head(state, head="nope")

    def test_unnamed_layers_fall_back_to_the_last_with_a_bias(self) -> None:
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        assert find_head(shapes(model)).chosen.name == "2"
        with pytest.raises(LabelError, match="no layer with a weight and a bias"):
            find_head({"x.weight": (3, 4)})


class TestCheckStateDict:
    def test_torchvision_predictor_is_judged_by_cls_score(self) -> None:
        from labelgate.torch import check_state_dict

        state = faster_rcnn(4).state_dict()  # num_classes=4: background + 3 classes
        assert (
            check_state_dict(state, ["cat", "dog", "bird"]) == "roi_heads.box_predictor.cls_score"
        )
        assert check_state_dict(state, ["__background__", "cat", "dog", "bird"])
        with pytest.raises(
            LabelError, match=r"cls_score' has 4 outputs .*one of them is the background"
        ):
            check_state_dict(state, ["cat", "dog", "bird", "fish", "frog"])

    def test_retinanet_counts_per_anchor(self) -> None:
        from labelgate.torch import check_state_dict

        state = retinanet(3, anchors=9).state_dict()
        assert check_state_dict(state, ["a", "b", "c"]) == "head.classification_head.cls_logits"
        with pytest.raises(
            LabelError,
            match=r"has 3 outputs \(torchvision RetinaNet/FCOS: 27 outputs for 9 anchors",
        ):
            check_state_dict(state, ["a", "b", "c", "d", "e"])


class FastRCNNPredictor(nn.Module):
    """torchvision/models/detection/faster_rcnn.py:347-360@torchvision 0.23.0, as written there."""

    def __init__(self, in_channels: int, num_classes: int) -> None:
        super().__init__()
        self.cls_score = nn.Linear(in_channels, num_classes)
        self.bbox_pred = nn.Linear(in_channels, num_classes * 4)


class FastRCNNOutputLayers(nn.Module):
    """detectron2/modeling/roi_heads/fast_rcnn.py:236-239@02b5c4e2: one logit more than the
    classes (the background), and the box deltas per class or class-agnostic."""

    def __init__(self, input_size: int, num_classes: int, *, agnostic: bool = False) -> None:
        super().__init__()
        self.cls_score = nn.Linear(input_size, num_classes + 1)
        self.bbox_pred = nn.Linear(input_size, (1 if agnostic else num_classes) * 4)


class Wrapper(nn.Module):
    """A training wrapper holding the model as an attribute (an EMA copy, a task module)."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net


def prefixed(state: dict[str, tuple[int, ...]], prefix: str) -> dict[str, tuple[int, ...]]:
    return {prefix + k: v for k, v in state.items()}


def predictor_in_sequential(k: int) -> nn.Module:
    return nn.Sequential(nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten()), FastRCNNPredictor(8, k))


class TestPrefixes:
    """Every layout under the prefixes that wrap a model's keys: a Sequential's index, a wrapper's
    attribute, DDP's ``module.``, torch.compile's ``_orig_mod.``, Lightning's ``model.``."""

    def test_predictor_in_a_sequential_takes_cls_score(self) -> None:
        found = find_head(shapes(predictor_in_sequential(5)))
        assert found.chosen.name == "1.cls_score"
        assert (found.chosen.outputs, found.chosen.classes) == (5, 5)
        assert found.chosen.family == "torchvision R-CNN" and found.chosen.background
        assert "cls_score beside bbox_pred" in found.why

    def test_a_wrapper_module(self) -> None:
        found = find_head(shapes(Wrapper(faster_rcnn(6))))
        assert (found.chosen.name, found.chosen.classes) == (
            "net.roi_heads.box_predictor.cls_score",
            6,
        )

    def test_ddp_module_prefix(self) -> None:
        # DDP's state_dict is its module's under "module." (torch/nn/parallel/distributed.py:959):
        # built by prefixing, as no process group is needed to name the keys.
        found = find_head(prefixed(shapes(predictor_in_sequential(3)), "module."))
        assert (found.chosen.name, found.chosen.classes) == ("module.1.cls_score", 3)

    def test_torch_compile_prefix(self) -> None:
        compiled = torch.compile(predictor_in_sequential(7))  # nothing compiles until called
        state = shapes(compiled)
        assert next(iter(state)).startswith("_orig_mod.")
        found = find_head(state)
        assert (found.chosen.name, found.chosen.classes) == ("_orig_mod.1.cls_score", 7)

    def test_ddp_of_a_compiled_model_in_lightning(self) -> None:
        state = prefixed(shapes(torch.compile(faster_rcnn(4))), "model.module.")
        found = find_head(state)
        assert found.chosen.name == "model.module._orig_mod.roi_heads.box_predictor.cls_score"
        assert found.chosen.classes == 4

    @pytest.mark.parametrize("agnostic", [False, True])
    def test_detectron2_output_layers(self, agnostic: bool) -> None:
        model = tree(box_predictor=FastRCNNOutputLayers(8, 3, agnostic=agnostic))
        found = find_head(prefixed(shapes(model), "roi_heads."))
        assert (found.chosen.name, found.chosen.outputs) == ("roi_heads.box_predictor.cls_score", 4)
        assert found.chosen.family == "detectron2 R-CNN" and found.chosen.background

    def test_bbox_pred_is_never_the_head(self) -> None:
        # A cls_score whose twin fits no known predictor is no R-CNN layout; the last layer with
        # a bias is then cls_score, never the box regression after it.
        model = nn.Sequential(
            nn.Linear(4, 8), tree(cls_score=nn.Linear(8, 5), bbox_pred=nn.Linear(8, 7))
        )
        found = find_head(shapes(model))
        assert (found.chosen.name, found.chosen.family) == ("1.cls_score", "generic")

    @pytest.mark.parametrize("prefix", ["1.", "net.", "module.", "_orig_mod.", "model."])
    @pytest.mark.parametrize(
        ("build", "expected", "classes"),
        [
            (lambda: retinanet(7, anchors=9), "head.classification_head.cls_logits", 7),
            (lambda: ssd(21), "head.classification_head.module_list.0", 21),
            (lambda: deeplabv3(21), "classifier.4", 21),
            (
                lambda: tree(stages=nn.Linear(8, 8), head=tree(fc=nn.Linear(8, 10))),
                "head.fc",
                10,
            ),
            (lambda: tree(conv1=nn.Conv2d(3, 8, 3), fc=nn.Linear(8, 10)), "fc", 10),
            (
                lambda: tree(
                    roberta=tree(encoder=nn.Linear(8, 8)),
                    classifier=tree(dense=nn.Linear(8, 8), out_proj=nn.Linear(8, 3)),
                ),
                "classifier.out_proj",
                3,
            ),
            (
                lambda: tree(
                    transformer=tree(h=nn.Linear(8, 8)), lm_head=nn.Linear(8, 50, bias=False)
                ),
                "lm_head",
                50,
            ),
        ],
    )
    def test_every_known_head_under_a_prefix(
        self, prefix: str, build: object, expected: str, classes: int
    ) -> None:
        assert callable(build)
        state = prefixed(shapes(build()), prefix)
        for order in (state, dict(sorted(state.items()))):  # module order, safetensors' sorted
            found = find_head(order)
            assert (found.chosen.name, found.chosen.classes) == (prefix + expected, classes)

    def test_aux_classifier_is_not_taken_under_a_prefix(self) -> None:
        # Sorted keys put aux_classifier first; under "module." it must still not match.
        state = dict(sorted(prefixed(shapes(deeplabv3(5)), "module.").items()))
        assert next(iter(state)).startswith("module.aux_classifier")
        assert find_head(state).chosen.name == "module.classifier.4"

    def test_check_state_dict_on_a_wrapped_predictor(self) -> None:
        from labelgate.torch import check_state_dict

        model = predictor_in_sequential(4)  # background + 3 classes
        for state in (
            model.state_dict(),
            {f"module.{k}": v for k, v in model.state_dict().items()},
            torch.compile(model).state_dict(),
        ):
            name = check_state_dict(state, ["cat", "dog", "bird"])
            assert name.endswith("1.cls_score")
            with pytest.raises(
                LabelError, match=r"1\.cls_score' has 4 outputs \(torchvision R-CNN"
            ):
                check_state_dict(state, ["cat", "dog", "bird", "fish", "frog"])


# Prefix components: the wrappers' own names, Sequential indices, and other attribute names
# (lower-case letters: no word of a head's layout, which a prefix could otherwise complete).
_LAYOUT_WORDS = {"fc", "head", "heads", "classifier", "score", "logits", "cls", "box", "bbox"}
components = st.one_of(
    st.sampled_from(["module", "_orig_mod", "model", "net", "ema"]),
    st.integers(min_value=0, max_value=12).map(str),
    st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=6).filter(
        lambda c: c not in _LAYOUT_WORDS
    ),
)


@settings(max_examples=60, deadline=None)
@given(
    parts=st.lists(components, max_size=4),
    k=st.integers(min_value=2, max_value=40),
    nested=st.booleans(),
    ordered=st.booleans(),
)
def test_predictor_under_any_prefix(parts: list[str], k: int, nested: bool, ordered: bool) -> None:
    prefix = "".join(f"{p}." for p in parts)
    base = faster_rcnn(k) if nested else predictor_in_sequential(k)
    state = prefixed(shapes(base), prefix)
    if not ordered:
        state = dict(sorted(state.items()))
    found = find_head(state)
    inner = "roi_heads.box_predictor.cls_score" if nested else "1.cls_score"
    assert found.chosen.name == prefix + inner
    assert (found.chosen.outputs, found.chosen.classes, found.chosen.background) == (k, k, True)
    assert found.chosen.family == "torchvision R-CNN"
