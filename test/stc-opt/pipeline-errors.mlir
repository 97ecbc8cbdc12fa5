// Every malformed --pass-pipeline is a usage error (exit 2) that names the
// column of the problem and shows it with a caret.

// RUN: stc-opt %s --pass-pipeline='builtin.module(func.func(cse)' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=OPEN-PAREN --strict-whitespace < %t.err
// OPEN-PAREN: stc-opt: error: in '--pass-pipeline' at column 15: unbalanced '(': missing ')'
// OPEN-PAREN-NEXT: {{^}}  builtin.module(func.func(cse){{$}}
// OPEN-PAREN-NEXT: {{^}}                ^{{$}}

// RUN: stc-opt %s --pass-pipeline='builtin.module(cse))' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=CLOSE-PAREN < %t.err
// CLOSE-PAREN: stc-opt: error: in '--pass-pipeline' at column 20: unbalanced ')': no '(' before it

// RUN: stc-opt %s --pass-pipeline='builtin.module(cse{a=1)' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=OPEN-BRACE --strict-whitespace < %t.err
// OPEN-BRACE: stc-opt: error: in '--pass-pipeline' at column 19: unbalanced '{': missing '}'
// OPEN-BRACE-NEXT: {{^}}  builtin.module(cse{a=1){{$}}
// OPEN-BRACE-NEXT: {{^}}                    ^{{$}}

// RUN: stc-opt %s --pass-pipeline='builtin.module(cse})' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=CLOSE-BRACE < %t.err
// CLOSE-BRACE: stc-opt: error: in '--pass-pipeline' at column 19: unbalanced '}': no '{' before it

// RUN: stc-opt %s --pass-pipeline='builtin.module(stc-test-annotate{value="abc})' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=QUOTE < %t.err
// QUOTE: stc-opt: error: in '--pass-pipeline' at column 40: unterminated quoted string

// RUN: stc-opt %s --pass-pipeline='builtin.module(cse canonicalize)' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=NO-COMMA < %t.err
// NO-COMMA: stc-opt: error: in '--pass-pipeline' at column 20: expected ',' or ')' after 'cse', found a name

// RUN: stc-opt %s --pass-pipeline='builtin.module(,cse)' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=EMPTY-ELEMENT < %t.err
// EMPTY-ELEMENT: stc-opt: error: in '--pass-pipeline' at column 16: expected a pass or operation name, found ','

// RUN: stc-opt %s --pass-pipeline='builtin.module(cse,)' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=TRAILING-COMMA < %t.err
// TRAILING-COMMA: stc-opt: error: in '--pass-pipeline' at column 20: expected a pass or operation name, found ')'

// RUN: stc-opt %s --pass-pipeline='builtin.module(cse{x}{y})' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=TWO-OPTIONS < %t.err
// TWO-OPTIONS: stc-opt: error: in '--pass-pipeline' at column 22: expected ',' or ')' after 'cse', found '{'

// RUN: stc-opt %s --pass-pipeline="builtin.module(cse'x')" 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=STRAY-QUOTE < %t.err
// STRAY-QUOTE: stc-opt: error: in '--pass-pipeline' at column 19: unexpected character '''

// RUN: stc-opt %s --pass-pipeline='func.func(cse)' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=ANCHOR < %t.err
// ANCHOR: stc-opt: error: in '--pass-pipeline' at column 1: the pipeline must be anchored on 'builtin.module', as in 'builtin.module(func.func(cse))'

// RUN: stc-opt %s --pass-pipeline='cse' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=BARE < %t.err
// BARE: stc-opt: error: in '--pass-pipeline' at column 1: the pipeline must be anchored on 'builtin.module', as in 'builtin.module(cse)'

// Unknown passes, upstream or stc-looking, at any depth.
// RUN: stc-opt %s --pass-pipeline='builtin.module(func.func(cse,no-such-pass))' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=UNKNOWN --strict-whitespace < %t.err
// UNKNOWN: stc-opt: error: in '--pass-pipeline' at column 30: unknown pass 'no-such-pass'
// UNKNOWN-NEXT: {{^}}  builtin.module(func.func(cse,no-such-pass)){{$}}
// UNKNOWN-NEXT: {{^}}                               ^{{$}}
// UNKNOWN-NEXT: mlir: {{.*}}'no-such-pass' does not refer to a registered pass or pass pipeline

// RUN: stc-opt %s --pass-pipeline='builtin.module(stc-no-such-pass)' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=UNKNOWN-STC < %t.err
// UNKNOWN-STC: stc-opt: error: in '--pass-pipeline' at column 16: unknown pass 'stc-no-such-pass'

// stc pass options are checked against the pass's spec.
// RUN: stc-opt %s --pass-pipeline='builtin.module(func.func(stc-test-annotate{key=k bogus=1}))' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=STC-OPTION < %t.err
// STC-OPTION: stc-opt: error: in '--pass-pipeline' at column 50: unknown option 'bogus' for pass 'stc-test-annotate' (valid options: key, value)

// RUN: stc-opt %s --pass-pipeline='builtin.module(stc-test-annotate{key=})' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=STC-VALUE < %t.err
// STC-VALUE: stc-opt: error: in '--pass-pipeline' at column 33: cannot create pass 'stc-test-annotate': bad value for option 'key' of 'stc-test-annotate': must not be empty

// RUN: stc-opt %s --pass-pipeline='builtin.module(stc-test-annotate{=x})' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=STC-NO-KEY < %t.err
// STC-NO-KEY: stc-opt: error: in '--pass-pipeline' at column 34: expected an option name before '='

// Upstream options are MLIR's to judge.
// RUN: stc-opt %s --pass-pipeline='builtin.module(func.func(canonicalize{no-such-option=1}))' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=UPSTREAM-OPTION < %t.err
// UPSTREAM-OPTION: stc-opt: error: in '--pass-pipeline' at column 38: invalid options for pass 'canonicalize'
// UPSTREAM-OPTION: mlir: <Pass-Options-Parser>: no such option no-such-option

// A pass must be nested under the op it runs on.
// RUN: stc-opt %s --pass-pipeline='builtin.module(stc-test-fail)' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=STC-ANCHOR < %t.err
// STC-ANCHOR: stc-opt: error: in '--pass-pipeline' at column 16: pass 'stc-test-fail' runs on 'func.func' but is nested under 'builtin.module'; write 'func.func(stc-test-fail)'

// RUN: stc-opt %s --pass-pipeline='builtin.module(func.func(stc-instrument))' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=STC-ANCHOR-MODULE < %t.err
// STC-ANCHOR-MODULE: stc-opt: error: in '--pass-pipeline' at column 26: pass 'stc-instrument' runs on 'builtin.module' but is nested under 'func.func'

// RUN: stc-opt %s --pass-pipeline='builtin.module(func.func(gpu-kernel-outlining))' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=UPSTREAM-ANCHOR < %t.err
// UPSTREAM-ANCHOR: stc-opt: error: in '--pass-pipeline' at column 26: 'gpu-kernel-outlining' cannot be nested under 'func.func'

// Pass flags report their own spelling.
// RUN: stc-opt %s --stc-test-annotate='bogus=1' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=FLAG-OPTION < %t.err
// FLAG-OPTION: stc-opt: error: in option '--stc-test-annotate=bogus=1': unknown option 'bogus' for pass 'stc-test-annotate'
// FLAG-OPTION-NEXT: stc-test-annotate{bogus=1}

// RUN: stc-opt %s --canonicalize='no-such-option=1' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=FLAG-UPSTREAM-OPTION < %t.err
// FLAG-UPSTREAM-OPTION: stc-opt: error: in option '--canonicalize=no-such-option=1': invalid options for pass 'canonicalize'

func.func @f() {
  return
}
