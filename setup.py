"""Builds the launcher extension (csrc/); everything else is in pyproject.toml."""
from pybind11.setup_helpers import Pybind11Extension
from setuptools import setup

setup(
    ext_modules=[
        Pybind11Extension("tilec._launcher", ["csrc/launcher.cpp"], cxx_std=17, libraries=["dl"]),
    ],
)
