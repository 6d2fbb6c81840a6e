"""The seed's dynamic-graph example, with ``chainer`` replaced by ``graphcore``.

Only the IPython lines changed: the PNG is rendered with Graphviz when ``dot`` is on PATH.
"""

import graphcore
import graphcore.functions as F
from graphcore import Variable
from graphcore.computational_graph import build_computational_graph
import numpy as np
import shutil
import subprocess

# Define a function that uses dynamic control flow
def dynamic_graph_example(x, apply_relu):
   # Dynamic control flow: If apply_relu is True, use ReLU; otherwise, use Sigmoid
   if apply_relu:
      h = F.relu(x)
   else:
      h = F.sigmoid(x)

   # Another dynamic decision: apply a different operation
   if x.array.mean() > 0:
      y = F.sum(h)
   else:
      y = F.prod(h)

   return y

# Create a Variable (input) with random values
x = Variable(np.random.randn(5).astype(np.float32))

# Example 1: Apply ReLU and check the dynamic behavior
apply_relu = True
result_1 = dynamic_graph_example(x, apply_relu)

# Build the computational graph for the first result
g1 = build_computational_graph([result_1])

# Save the graph to a file
with open('dynamic_graph_relu.dot', 'w') as f:
   f.write(g1.dump())
print("Graph with ReLU has been saved as dynamic_graph_relu.dot")

# To convert .dot to .png using graphviz (in terminal or command prompt):
if shutil.which('dot'):
   subprocess.run(['dot', '-Tpng', 'dynamic_graph_relu.dot', '-o', 'dynamic_graph_relu.png'],
                  check=True)
