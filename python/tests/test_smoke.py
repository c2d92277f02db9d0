import metagame


def test_uniform_leduc_nash_conv():
    game = metagame.load_game("leduc_poker")
    assert abs(metagame.nash_conv(game, metagame.Policy.uniform(game)) - 1709 / 360) < 1e-12
