"""The pieces the scripts in tools/ share, one concern per module.

- data: LIBSVM files by name in a data directory, their test split (NAME.t) or a seeded 80/20
  split, the synthetic sets in memory, the +-1 labels, problems saved for a child process;
- kernel_sets: the named RBF benchmark sets of bench_smo and the scripts built on it;
- synthetic: the seeded synthetic generators (tools/make_synthetic.py writes them to files);
- running: peak resident memory (reset and read), timed medians, fresh-subprocess runs that
  answer one JSON line;
- rbf_child: one measured RBF training of fastsvm or LIBSVM in a fresh process;
- peers: the peer libraries' runs (liblinear-official);
- measures: objectives, problems and the tolerance ladder the linear benchmarks share;
- nu_path: the nu-SVM path benchmarks' sets and fastsvm side;
- report: the argument parser, the machine line and markdown report writers.

The scripts run as ``python tools/NAME.py``: Python then searches tools/ first for imports, so
``import benchlib`` works as it stands.
"""
