"""Pure verification: theorems as SymPy objects, accountants, statistical checks; verdicts as data."""
