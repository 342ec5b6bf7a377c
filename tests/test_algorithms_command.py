"""``bilevel-theory algorithms NAME``: every default is shown as what it is — a value, or the
formula that computes it from the instance's constants — and no docstring is cut mid-sentence;
every hyperparameter has a declared meaning and range (no empty cells in the README's table)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from bilevel_theory import ALGORITHMS
from bilevel_theory.commands import algorithm_info, algorithms
from bilevel_theory.hyperparameters import SCHEMA


def test_defaults_from_the_instance_show_their_formula():
    hp = algorithm_info("afbo")["hyperparameters"]
    assert hp["outer_step"] == 'from the instance: 0.5 / c["L_phi"]'
    assert hp["neumann_scale"] == 'from the instance: c["ell_g1"]'
    fednest = algorithm_info("fednest")["hyperparameters"]
    assert fednest["sampled_clients"] == "from the instance: min(p.clients, 10)"


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_every_default_is_a_value_or_a_whole_sentence(name):
    for key, text in algorithm_info(name)["hyperparameters"].items():
        if text.startswith("from the instance"):
            rest = text.removeprefix("from the instance")
            assert rest.startswith(": ") and rest.count("(") == rest.count(")"), (key, text)


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_every_hyperparameter_is_declared(name):
    cls = ALGORITHMS[name]
    missing = [k for k in cls.defaults if k not in SCHEMA and k not in cls.schema]
    assert not missing, missing


def test_the_command_prints_the_formula():
    out = CliRunner().invoke(algorithms, ["afbo"]).output
    assert 'outer_step = from the instance: 0.5 / c["L_phi"]' in out
