"""`squall compare`: the effect of B against A per cell and metric, from runs' summary tables
(analysis/README.md, "squall compare")."""
