"""Seeded synthetic datasets in LIBSVM format (for benchmarks; nothing here is real data).

Kinds:
  text     sparse text-like rows: power-law (Zipf) feature frequencies, tf-idf values with unit
           L2 norm per row; labels +-1 from a hidden sparse linear model plus Gaussian noise.
  covtype  dense covtype-like rows: 54 features (10 scaled continuous measurements, 4 one-hot
           wilderness areas, 40 one-hot soil types); labels +-1 from a nonlinear rule plus noise.
  moons    two interleaving half circles in the plane (scikit-learn's make_moons geometry), one
           per label, plus isotropic Gaussian noise (default 0.3: the classes overlap, the Bayes
           rule is right on ~91.5 % of the rows).

Usage:
  python tools/make_synthetic.py text --rows 1000000 --out synthetic_text.libsvm --test-fraction 0.2
  python tools/make_synthetic.py covtype --rows 2000000 --out synthetic_covtype.libsvm
  python tools/make_synthetic.py text --target-mb 300 --out bench_out/synthetic_300mb.libsvm
  python tools/make_synthetic.py moons --rows 50000 --test-fraction 0.2 --out bench_out/moons

The same seed gives the same files. A held-out test file (``OUT.t``) is drawn from the same
hidden model with its own random stream. The generators live in ``benchlib.synthetic``
(``text_like_blocks``, ``covtype_like_blocks``, ``moons_blocks``, ``write_libsvm``); this script
re-exports them.
"""
import os
import sys

from benchlib.report import parser
from benchlib.synthetic import covtype_like_blocks, moons_blocks, text_like_blocks, write_libsvm

__all__ = ["covtype_like_blocks", "moons_blocks", "text_like_blocks", "write_libsvm"]


def main(argv=None):
    ap = parser(__doc__)
    ap.add_argument("kind", choices=["text", "covtype", "moons"])
    ap.add_argument("--rows", type=int, default=None,
                    help="training rows (default 1,000,000 for text, 2,000,000 for covtype, 50,000 for moons)")
    ap.add_argument("--features", type=int, default=100_000, help="text: number of features")
    ap.add_argument("--mean-nnz", type=float, default=40, help="text: mean tokens per row")
    ap.add_argument("--noise", type=float, default=None, help="label noise (kind-specific scale)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target-mb", type=float, default=None,
                    help="write rows until the training file has at least this many MB (ignores --rows)")
    ap.add_argument("--test-fraction", type=float, default=0.0,
                    help="also write OUT.t with this fraction of the training rows, same hidden model")
    ap.add_argument("--out", default=None, help="output path (default synthetic_<kind>.libsvm)")
    args = ap.parse_args(argv)

    out = args.out or f"synthetic_{args.kind}.libsvm"
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    default_rows = {"text": 1_000_000, "covtype": 2_000_000, "moons": 50_000}
    n_rows = args.rows if args.rows is not None else default_rows[args.kind]
    extra = {} if args.noise is None else {"noise": args.noise}
    if args.kind == "text":
        extra.update(n_features=args.features, mean_nnz=args.mean_nnz)
        make = text_like_blocks
    else:
        make = covtype_like_blocks if args.kind == "covtype" else moons_blocks
    target = None if args.target_mb is None else int(args.target_mb * 1e6)
    rows, nnz, size = write_libsvm(out, make(None if target else n_rows, seed=args.seed, **extra), target)
    print(f"{out}: synthetic {args.kind}, {rows} rows, {nnz} stored values, {size / 1e6:.1f} MB")
    if args.test_fraction > 0:
        n_test = max(1, int(round(rows * args.test_fraction)))
        rows, nnz, size = write_libsvm(out + ".t", make(n_test, seed=args.seed, part="test", **extra))
        print(f"{out}.t: synthetic {args.kind} (held out), {rows} rows, {nnz} stored values, {size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
