import metagame


def test_uniform_leduc_nash_conv():
    game = metagame.load_game("leduc_poker")
    assert abs(metagame.nash_conv(game, metagame.Policy.uniform(game)) - 1709 / 360) < 1e-12


def test_dir_lists_only_the_packages_own_names():
    # What the package imports for itself (typing, os, pathlib, functools) stays private.
    public = {n for n in dir(metagame) if not n.startswith("_")}
    assert public - set(metagame.__all__) <= {"Config", "openspiel", "distributed", "jax", "torch", "pettingzoo"}, public
    assert set(metagame.__all__) <= set(dir(metagame))
