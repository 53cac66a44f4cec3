"""Synthetic stores that the tests and the benchmarks both build: ``items`` (item-level runs drawn
around a model's skill), ``results`` (a results store of N models with intervals), ``details``
(a store with per-sample details, for rescoring)."""
