"""The Evalita tabs: the CPS ranking, the task drill-down, the model page and the plots."""
