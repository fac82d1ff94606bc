// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfctr._core: counting from Python over libperfctr's public API.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <perfctr/perfctr.h>

static PyObject *core_library_version(PyObject *self, PyObject *unused)
{
	return PyUnicode_FromString(perfctr_version());
}

static PyMethodDef core_methods[] = {
	{ "library_version", core_library_version, METH_NOARGS,
	  "library_version() -> str\n\nThe version of the libperfctr in use." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef core_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "perfctr._core",
	.m_doc = "Counting over libperfctr (use the perfctr package).",
	.m_size = -1,
	.m_methods = core_methods,
};

PyMODINIT_FUNC PyInit__core(void)
{
	return PyModule_Create(&core_module);
}
