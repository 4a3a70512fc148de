"""Write the small dataset that ships with fastsvm (data/breast_cancer_scale{,.t}).

Source: scikit-learn's bundled copy of the Wisconsin diagnostic breast-cancer data (569 rows, 30
features). Features are scaled to [-1, 1] with ranges from the training split (as svm-scale -s/-r
would), labels are +1 (benign) / -1 (malignant), and a seeded stratified split keeps 30% for testing.

    python tools/make_shipped_data.py [--out data]
"""
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from benchlib.report import parser as make_parser


def write_libsvm(path, X, y):
    with open(path, "w") as out:
        for row, label in zip(X, y):
            items = " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(row) if v != 0)
            out.write(f"{label:+d} {items}\n")


def main():
    parser = make_parser(__doc__)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "data"))
    args = parser.parse_args()
    data = load_breast_cancer()
    y = np.where(data.target == 1, 1, -1)
    X_train, X_test, y_train, y_test = train_test_split(
        data.data, y, test_size=0.3, random_state=0, stratify=y)
    lo, hi = X_train.min(axis=0), X_train.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_libsvm(out / "breast_cancer_scale", -1 + 2 * (X_train - lo) / span, y_train)
    write_libsvm(out / "breast_cancer_scale.t", -1 + 2 * (X_test - lo) / span, y_test)
    print(f"wrote {out}/breast_cancer_scale ({len(y_train)} rows) and .t ({len(y_test)} rows)")


if __name__ == "__main__":
    main()
