"""The built-in ops. Each is an ``ember.autograd.Function`` next to the public function that applies it."""
