"""Tables computed from the results store (never typed in): one module per study, shared statistics in
``stats``."""
