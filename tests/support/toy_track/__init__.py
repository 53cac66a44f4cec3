"""A fourth track for tests: everything a track is, in one package, registered with one line.

It is registered the way a maintainer adds a track from a package of their own —
``EVALITA_EXTRA_TRACKS=toy=tests.support.toy_track.spec:SPEC`` — so nothing of the project
names it.  Its runner needs no model: it scores a request by the length of its model id
(``STUB_RECORD`` / ``STUB_SLEEP_S``: the Slurm tests record each run and make it last).
"""

#: How a test registers the toy track (the value of ``EVALITA_EXTRA_TRACKS``).
REGISTRATION = "toy=tests.support.toy_track.spec:SPEC"
