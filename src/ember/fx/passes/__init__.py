"""Passes over ``ember.fx`` graphs."""
