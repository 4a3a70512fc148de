"""Same results check for a refactor: train fastsvm-train models on the shared data with every
solver but SSsNAL (check_same_ssnal.py holds it) and print, per run, the sha256 of the model files
and the solver's iteration counts (the "#iter = N" of each subproblem). Run it with the interpreter
of the install before and after the change and compare the two outputs line by line (diff): equal
hashes are bit-identical models.

    PYTHONPATH=/path/to/before python tools/check_same_models.py > before.txt
    python tools/check_same_models.py > after.txt && diff before.txt after.txt
"""
import hashlib
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib.report import parser as make_parser

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

# (name, data file, fastsvm-train options)
RUNS = [
    ("smo c_svc rbf", "heart_scale", "-s smo -s 0 -t 2"),
    ("smo c_svc rbf a1a", "a1a", "-s smo -s 0 -t 2 -c 4"),
    ("smo c_svc poly ovo", "dna.scale", "-s smo -s 0 -t 1 -d 2"),
    ("smo nu_svc", "heart_scale", "-s smo -s 1 -n 0.3"),
    ("smo one_class", "heart_scale", "-s smo -s 2 -n 0.2"),
    ("smo epsilon_svr", "abalone_scale", "-s smo -s 3 -p 0.5"),
    ("smo nu_svr", "housing_scale", "-s smo -s 4 -n 0.4"),
    ("smo c_svc -h 0", "svmguide1", "-s smo -s 0 -h 0 -c 8"),
    ("dcd hinge", "a9a", "-s dcd -L hinge -B 1"),
    ("dcd squared_hinge", "w8a", "-s dcd -L squared_hinge -c 2"),
    ("dcd hinge seed 7 ovr", "dna.scale", "-s dcd -L hinge -R 7"),
    ("dcd no shrinking", "a1a", "-s dcd -h 0 -B 1"),
    ("primal_newton", "a9a", "-s primal_newton -B 1"),
    ("primal_newton ovr", "dna.scale", "-s primal_newton"),
    ("l1_cd", "a9a", "-s l1_cd -B 1"),
    ("l1_cd seed 3", "w1a", "-s l1_cd -R 3 -c 4"),
    ("crammer_singer", "dna.scale", "-s crammer_singer -B 1"),
    ("crammer_singer seed 5", "satimage.scale", "-s crammer_singer -R 5"),
    ("block_smo c_svc rbf", "a1a", "-s block_smo -t 2 -c 4"),
    ("block_smo ovo", "dna.scale", "-s block_smo -t 2"),
    ("auto", "a1a", "-s auto -t 2"),
    ("dcdm nu_svc", "heart_scale", "-s dcdm -s 1 -n 0.3"),
    ("dcdm one_class", "heart_scale", "-s dcdm -s 2 -n 0.2"),
    ("dcdm nu_svc linear", "a1a", "-s dcdm -s 1 -t 0 -n 0.5"),
    ("dcdm nu path", "heart_scale", "-s dcdm -s 1 -n 0.2:0.1:0.5"),
    ("nesvm", "a1a", "-s nesvm"),
    ("nesvm l1", "heart_scale", "-s nesvm -o penalty=l1"),
    ("alm", "a1a", "-s alm"),
    ("alm squared_hinge ovr", "dna.scale", "-s alm -L squared_hinge"),
    ("admm", "heart_scale", "-s admm -t 2"),
    ("admm hodlr", "a1a", "-s admm -t 2 -o backend=hodlr -o rank=16"),
    ("nystroem", "a1a", "-s nystroem -t 2 -o landmarks=100"),
]
# --bench: SMO on bench_smo.py's sets (RBF, LIBSVM's defaults), minutes rather than seconds
BENCH_RUNS = [
    ("smo bench", "mushrooms", "-s smo -s 0"),
    ("smo bench", "pendigits", "-s smo -s 0"),
    ("smo bench", "letter.scale", "-s smo -s 0"),
    ("smo bench", "satimage.scale", "-s smo -s 0"),
    ("smo bench svr", "abalone_scale", "-s smo -s 3"),
    ("smo bench svr", "mg", "-s smo -s 3"),
    ("smo bench", "a9a", "-s smo -s 0"),
]
ITERATIONS = re.compile(r"#iter = (\d+)")


def main():
    parser = make_parser(__doc__)
    parser.add_argument("--data-dir", default=str(DATA))
    parser.add_argument("--bench", action="store_true", help="run bench_smo.py's sets instead")
    args = parser.parse_args()
    train = Path(sys.executable).parent / "fastsvm-train"
    with tempfile.TemporaryDirectory() as tmp:
        for name, data, options in (BENCH_RUNS if args.bench else RUNS):
            path = Path(args.data_dir) / data
            if not path.exists():
                print(f"{name}: {data} absent, skipped")
                continue
            run_dir = Path(tempfile.mkdtemp(dir=tmp))
            out = subprocess.run([str(train), "-j", "1", *options.split(), str(path), str(run_dir / "model")],
                                 capture_output=True, text=True, check=True).stdout
            digest = hashlib.sha256()   # every file the run wrote (a nu grid writes one per nu)
            for model in sorted(run_dir.iterdir()):
                digest.update(model.name.encode() + model.read_bytes())
            digest = digest.hexdigest()[:16]
            counts = ITERATIONS.findall(out)   # one per subproblem, in training order
            print(f"{name:26s} {data:16s} {digest}  #iter {','.join(counts)}")


if __name__ == "__main__":
    main()
