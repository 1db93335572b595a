"""A generator that fails at import, like a checkout whose dependencies are not installed."""
import pkagent_fixture_module_that_does_not_exist  # noqa: F401


def create_input_tensor(rank, world_size, problem_id, base_shape, dtype, trial=0, device=None):
    raise AssertionError("never reached")
