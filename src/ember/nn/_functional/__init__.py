"""The implementations behind ``ember.nn.functional``, one module per family (re-exported there)."""
