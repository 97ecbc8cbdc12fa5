# lit configuration for stc: every .mlir / .test file under test/ (except
# unit/ and Inputs/ folders) is a shell test run with stc's tools and LLVM's
# FileCheck / not on PATH.
import os
import shutil
import subprocess

import lit.formats

config.name = "stc"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "unit", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.stc_obj_root, "test")

path = os.pathsep.join([config.stc_tools_dir, config.llvm_tools_dir,
                        config.environment.get("PATH", os.environ.get("PATH", ""))])
config.environment["PATH"] = path
for var in ("HOME", "TMPDIR", "LANG"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
# Tests must never see a user's tuning or profiling settings.
for var in list(config.environment):
    if var.startswith("STC_"):
        del config.environment[var]

config.substitutions.append(("%stc_src_root", config.stc_src_root))

if config.stc_build_compiler:
    config.available_features.add("compiler")

def have_cuda_gpu():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        return subprocess.run([smi, "-L"], capture_output=True, timeout=20).returncode == 0
    except Exception:
        return False

if have_cuda_gpu():
    config.available_features.add("cuda-gpu")

# test/tune-hot-paths: where libstc_rt lives, and whether it has the site
# dispatch entry point yet (runs of --tune-hot-paths programs need it).
config.substitutions.append(("%stc_lib_dir", os.path.join(config.stc_obj_root, "lib")))
_stc_rt_so = os.path.join(config.stc_obj_root, "lib", "libstc_rt.so")
try:
    import subprocess
    if "stc_rt_site_enter" in subprocess.run(
            ["nm", "-D", "--defined-only", _stc_rt_so], capture_output=True,
            text=True).stdout:
        config.available_features.add("rt-dispatch")
except OSError:
    pass
