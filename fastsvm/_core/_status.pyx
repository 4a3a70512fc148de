# Status, for Python: the codes every nogil kernel returns (declared in _status.pxd).
