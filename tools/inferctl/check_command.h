// `inferctl check`: says whether a model can run in inferd, without running it.
//
//   inferctl check MODEL [--fixed-shape NAME=1x128]... [--devices DEV[=BYTES],...]
//                        [--rules RULES] [--no-fusions]
//
// It builds the session as the server does (load, checker and shape inference, fusions,
// partition, a kernel for every node, the execution plan) and prints either what will run (the
// model's opset, its operators, fused nodes, the devices, and whether the memory plan is static
// with its peak) or every reason it cannot, each with its nodes, at once (unsupported operator,
// opset or element type; a node a kernel refuses). Nothing is executed.
//
// Exit codes: 0 the model can run; 1 it cannot (the report on stdout says why); 2 bad arguments.
#ifndef INFERD_TOOLS_INFERCTL_CHECK_COMMAND_H_
#define INFERD_TOOLS_INFERCTL_CHECK_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

namespace inferd::tools {

// argv after "check"; returns the process exit code.
int CheckCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace inferd::tools

#endif  // INFERD_TOOLS_INFERCTL_CHECK_COMMAND_H_
