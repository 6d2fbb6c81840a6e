"""Metrics against scikit-learn on fixed arrays. The expected values were computed once with
scikit-learn 1.9.1 (``sklearn.metrics``, in a scratch environment: it is no dependency of
this project) on these same arrays, rows with label -1 dropped first; the call is named by
each value. The collector is fed in uneven batches: the figures are of all rows at once,
never means over batches."""

import numpy as np
import pytest

from graphcore.commands.train.metrics import MetricCollector, MetricError, higher_is_better

ALL = ("accuracy", "precision", "recall", "f1", "auc", "confusion")

# 4 classes, class 3 never predicted (its precision divides by zero), one label -1
LOGITS = np.array([
    [2.0, 0.5, -1.0, 0.1], [0.3, 1.2, 0.1, 0.0], [0.1, 0.2, 1.5, 1.4], [1.0, 0.9, 0.2, 0.8],
    [-0.5, 2.0, 0.3, 1.9], [0.2, 0.1, 0.0, -0.1], [0.0, 0.3, 2.2, 1.0], [1.1, 0.4, 0.9, 1.0],
    [0.2, 1.3, 0.1, 1.2], [0.5, 0.6, 0.7, 0.65], [3.0, 0.0, 0.0, 0.0], [0.1, 0.1, 0.3, 0.2]],
    np.float32)
LABELS = np.array([0, 1, 3, 0, 3, 2, 2, 3, 1, -1, 0, 2], np.int32)


def collected(metrics, y, t, loss_op="softmax_cross_entropy", cuts=(0, 5, 6)):
    """A collector fed ``y``/``t`` in batches that start at ``cuts`` (one example each)."""
    collector = MetricCollector(metrics, loss_op)
    bounds = [*cuts, len(t)]
    for start, end in zip(bounds, bounds[1:], strict=False):
        collector.add([(y[start:end], t[start:end])])
    return collector


def test_multiclass_figures_equal_scikit_learns_with_a_class_never_predicted():
    c = collected(ALL, LOGITS, LABELS)
    values = c.values()
    # f1_score(y, pred, average="macro"), precision_score(...), recall_score(...)
    assert values["f1"] == pytest.approx(0.5541666666666667, rel=1e-12)
    assert values["precision"] == pytest.approx(0.4833333333333333, rel=1e-12)
    assert values["recall"] == pytest.approx(0.6666666666666666, rel=1e-12)
    # roc_auc_score(y, softmax(logits), multi_class="ovr", average="macro")
    assert values["auc"] == pytest.approx(0.9444444444444445, rel=1e-12)
    assert values["accuracy"] == pytest.approx(0.6363636363636364, rel=1e-12)
    # confusion_matrix(y, pred, labels=[0, 1, 2, 3])
    assert c.confusion().tolist() == [[3, 0, 0, 0], [0, 2, 0, 0], [1, 0, 2, 0], [1, 1, 1, 0]]
    # precision_recall_fscore_support(y, pred, labels=[0, 1, 2, 3], average=None)
    figures = c.per_class()
    assert [f.precision for f in figures] == pytest.approx([0.6, 2 / 3, 2 / 3, 0.0], rel=1e-12)
    assert [f.recall for f in figures] == pytest.approx([1.0, 1.0, 2 / 3, 0.0], rel=1e-12)
    assert [f.f1 for f in figures] == pytest.approx([0.75, 0.8, 2 / 3, 0.0], rel=1e-12)
    assert [f.support for f in figures] == [3, 2, 3, 3]
    assert [f.name for f in figures] == ["0", "1", "2", "3"]


def test_the_figures_do_not_depend_on_how_the_rows_are_batched():
    one = collected(ALL, LOGITS, LABELS, cuts=(0,)).values()
    for cuts in ((0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), (0, 7), (0, 3, 11)):
        assert collected(ALL, LOGITS, LABELS, cuts=cuts).values() == pytest.approx(one)


def test_ignored_labels_are_left_out_of_every_figure():
    keep = LABELS != -1
    dropped = collected(ALL, LOGITS[keep], LABELS[keep]).values()
    assert collected(ALL, LOGITS, LABELS).values() == pytest.approx(dropped, rel=1e-15)
    # the ignored row's prediction would be class 2, whose precision it would change
    relabelled = LABELS.copy()
    relabelled[9] = 0
    assert collected(ALL, LOGITS, relabelled).values()["precision"] != \
        pytest.approx(dropped["precision"])


# one logit per row (sigmoid cross entropy): tied logits, one label -1
BINARY_LOGITS = np.array([2.0, -1.0, 0.5, 0.5, -0.3, 1.5, -2.0, 0.5, 0.0, -0.7, 3.0],
                         np.float32).reshape(-1, 1)
BINARY_LABELS = np.array([1, 0, 1, 0, 1, 1, 0, -1, 0, 0, 1], np.int32).reshape(-1, 1)


def test_binary_sigmoid_figures_equal_scikit_learns():
    c = collected(ALL, BINARY_LOGITS, BINARY_LABELS, loss_op="sigmoid_cross_entropy")
    values = c.values()
    # predictions: logit >= 0; f1_score(y, pred, average="macro") and the others
    assert values["f1"] == pytest.approx(0.696969696969697, rel=1e-12)
    assert values["precision"] == pytest.approx(0.7083333333333333, rel=1e-12)
    assert values["recall"] == pytest.approx(0.7, rel=1e-12)
    # roc_auc_score(y, sigmoid(logits)): tied scores count one half
    assert values["auc"] == pytest.approx(0.9, rel=1e-12)
    assert values["accuracy"] == pytest.approx(0.7, rel=1e-12)
    # confusion_matrix(y, pred)
    assert c.confusion().tolist() == [[3, 2], [1, 4]]
    # precision_recall_fscore_support(y, pred, average=None)
    figures = c.per_class()
    assert [f.precision for f in figures] == pytest.approx([0.75, 2 / 3], rel=1e-12)
    assert [f.f1 for f in figures] == pytest.approx([2 / 3, 0.7272727272727273], rel=1e-12)
    assert [f.support for f in figures] == [5, 5]


def test_two_class_softmax_auc_is_the_binary_auc_of_the_second_class():
    logits = np.array([[0.2, 1.0], [1.5, -0.5], [0.0, 0.3], [0.9, 0.8], [-1.0, 1.0],
                       [0.4, 0.1], [0.3, 0.35]], np.float32)
    labels = np.array([1, 0, 0, 1, 1, 0, 1], np.int32)
    values = collected(("auc", "f1"), logits, labels).values()
    # roc_auc_score(y, softmax(logits)[:, 1]); f1_score(y, argmax, average="macro")
    assert values["auc"] == pytest.approx(0.8333333333333334, rel=1e-12)
    assert values["f1"] == pytest.approx(0.7083333333333333, rel=1e-12)


def test_a_class_never_labelled_nor_predicted_is_not_averaged():
    logits = np.array([[1.0, 0.0, 0.5, -5.0], [0.0, 1.0, 0.5, -5.0], [0.2, 0.1, 0.9, -5.0],
                       [0.9, 0.8, 0.1, -5.0], [0.1, 0.3, 0.2, -5.0], [0.5, 0.4, 0.6, -5.0]],
                      np.float32)
    labels = np.array([0, 1, 2, 1, 1, 0], np.int32)
    c = collected(("precision", "recall", "f1", "auc", "confusion"), logits, labels,
                  cuts=(0, 4))
    values = c.values()
    # f1_score(y, pred, average="macro") etc.: scikit-learn's labels are those that occur
    assert values["f1"] == pytest.approx(0.6555555555555556, rel=1e-12)
    assert values["precision"] == pytest.approx(0.6666666666666666, rel=1e-12)
    assert values["recall"] == pytest.approx(0.7222222222222222, rel=1e-12)
    # mean over the classes present of roc_auc_score(y == c, softmax(logits)[:, c])
    assert values["auc"] == pytest.approx(0.9583333333333334, rel=1e-12)
    assert c.confusion().shape == (4, 4) and c.confusion()[3].sum() == 0
    assert c.per_class()[3].support == 0 and c.per_class()[3].f1 == 0.0


def test_auc_of_labels_of_one_class_is_nan():
    logits = np.array([[0.1, 0.9], [0.7, 0.3]], np.float32)
    assert np.isnan(collected(("auc",), logits, np.array([1, 1], np.int32),
                              cuts=(0,)).values()["auc"])


TARGETS = np.array([[1.0, 10.0, 5.0], [2.0, 8.0, 5.0], [3.0, 13.0, 5.0], [4.0, 9.0, 5.0],
                    [5.0, 11.0, 5.0], [6.0, 7.0, 5.0]], np.float32)
PREDICTIONS = np.array([[1.1, 9.0, 5.0], [1.9, 8.5, 5.1], [3.2, 12.0, 5.0], [3.7, 9.5, 4.9],
                        [5.4, 10.0, 5.0], [5.8, 8.0, 5.0]], np.float32)


def test_r2_equals_scikit_learns_over_several_outputs():
    def r2(y, t, cuts=(0, 2)):
        return collected(("r2",), y, t, loss_op="mean_squared_error", cuts=cuts).values()["r2"]
    # float32 inputs: the values are scikit-learn's on these arrays cast from float32
    tol = dict(rel=1e-6)
    # r2_score(t, y, multioutput="uniform_average"): the constant third output, predicted
    # inexactly, counts 0.0 (force_finite); raw values [0.98, 0.8071428571428572, 0.0]
    assert r2(PREDICTIONS, TARGETS) == pytest.approx(0.5957142857142858, **tol)
    # r2_score(t[:, 0], y[:, 0])
    assert r2(PREDICTIONS[:, 0], TARGETS[:, 0]) == pytest.approx(0.98, **tol)
    # r2_score(t[:, 2], t[:, 2]): a constant target predicted exactly
    assert r2(TARGETS[:, 2], TARGETS[:, 2]) == 1.0
    assert np.isnan(r2(PREDICTIONS[:1], TARGETS[:1], cuts=(0,)))


def test_metrics_that_do_not_fit_the_loss_say_why():
    with pytest.raises(MetricError, match="integer labels"):
        collected(("f1",), PREDICTIONS, TARGETS)
    with pytest.raises(MetricError, match="one logit per row"):
        collected(("auc",), LOGITS, LABELS[:, None].repeat(4, 1),
                  loss_op="sigmoid_cross_entropy")


def test_early_stopping_maximizes_scores_and_minimizes_errors():
    assert all(higher_is_better(m) for m in ("f1", "validation_auc", "r2", "accuracy",
                                               "validation_precision", "recall"))
    assert not any(higher_is_better(m) for m in ("loss", "validation_mse", "mae"))


def test_a_collectors_state_restores_it_exactly():
    c = collected(ALL, LOGITS[:7], LABELS[:7])
    restored = MetricCollector(ALL, "softmax_cross_entropy")
    restored.restore(c.state())
    restored.add([(LOGITS[7:], LABELS[7:])])
    assert restored.values() == collected(ALL, LOGITS, LABELS).values()
    broken = c.state()
    broken["scores"] = broken["scores"][:2]
    with pytest.raises(MetricError, match="differ in rows"):
        MetricCollector(ALL, "softmax_cross_entropy").restore(broken)
    with pytest.raises(MetricError, match="labels: an array of shape"):
        MetricCollector(ALL, "softmax_cross_entropy").restore(
            {**c.state(), "labels": c.state()["labels"].astype(np.float32)})
