#!/usr/bin/pvpython
"""Prints what ParaView reads from an XDMF file, as JSON: the cell
dimensions and, per time step, every cell array (test_paraview.py runs it
with pvpython, which is an MPI process of its own: the MPI jobs stay in the
test driver)."""
import json
import sys

from paraview import servermanager
from paraview.simple import XDMFReader

reader = XDMFReader(FileNames=[sys.argv[1]])
reader.UpdatePipelineInformation()
out = {"dims": None, "steps": []}
for t in reader.TimestepValues:
    reader.UpdatePipeline(t)
    data = servermanager.Fetch(reader)
    out["dims"] = [d - 1 for d in data.GetDimensions()]
    cells = data.GetCellData()
    arrays = {}
    for i in range(cells.GetNumberOfArrays()):
        a = cells.GetArray(i)
        arrays[cells.GetArrayName(i)] = [a.GetValue(k) for k in range(a.GetNumberOfTuples())]
    out["steps"].append({"time": t, "arrays": arrays})
json.dump(out, sys.stdout)
