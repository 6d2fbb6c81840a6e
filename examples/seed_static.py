"""The seed's static-graph example, with ``chainer`` replaced by ``graphcore``.

Only the IPython lines changed: the PNG is rendered with Graphviz when ``dot`` is on PATH.
"""

import graphcore
import graphcore.functions as F
import graphcore.links as L
from graphcore import Variable, Chain
from graphcore.computational_graph import build_computational_graph
import numpy as np
import shutil
import subprocess

# Define a model with a fixed architecture
class StaticGraphModel(Chain):
   def __init__(self):
      super(StaticGraphModel, self).__init__()
      with self.init_scope():
         self.l1 = L.Linear(None, 5)  # Input to hidden layer with 5 units
         self.l2 = L.Linear(5, 2)    # Hidden layer to output with 2 units

   def forward(self, x):
      h = F.relu(self.l1(x))  # Apply ReLU activation
      y = self.l2(h)        # Linear transformation to output
      return y

# Instantiate the model
model = StaticGraphModel()

# Create input variables
x = Variable(np.random.rand(3, 4).astype(np.float32))  # Batch of 3, 4 features each

# Forward pass (builds the computational graph)
y = model.forward(x)

# Build the computational graph
g = build_computational_graph([y])

# Save the graph to a file
with open('static_graph.dot', 'w') as f:
   f.write(g.dump())

print("Static graph has been saved as static_graph.dot")

# To convert .dot to .png using graphviz (in terminal or command prompt):
if shutil.which('dot'):
   subprocess.run(['dot', '-Tpng', 'static_graph.dot', '-o', 'static_graph.png'], check=True)
