"""The contamination track's worker side: read the public test sets, score orders and contexts
through the harness, compute the tests (:mod:`.run`, :mod:`.data`, :mod:`.convert`)."""
