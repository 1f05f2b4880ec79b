// SPDX-License-Identifier: MIT
// Bad arguments and bad placements: one clear error line, exit status 2.
// RUN: (%bin/tierwise-rewrite %s --; echo "exit $?") 2>&1 | FileCheck --check-prefix=NOPLACEMENT %s
// NOPLACEMENT: tierwise-rewrite: error: --placement FILE is required
// NOPLACEMENT-NEXT: exit 2
// RUN: (%bin/tierwise-rewrite --placement %S/Inputs/no-sites-elsewhere.json -i -o %t.patch %s --; echo "exit $?") 2>&1 | FileCheck --check-prefix=EXCLUSIVE %s
// EXCLUSIVE: error: -i and -o are exclusive
// EXCLUSIVE-NEXT: exit 2
// RUN: (%bin/tierwise-rewrite --placement %t.missing.json %s --; echo "exit $?") 2>&1 | FileCheck --check-prefix=MISSING %s
// MISSING: error: {{.*}}missing.json: cannot read placement: No such file or directory
// MISSING-NEXT: exit 2
// RUN: echo '{"sites": [' > %t.notjson.json
// RUN: (%bin/tierwise-rewrite --placement %t.notjson.json %s --; echo "exit $?") 2>&1 | FileCheck --check-prefix=NOTJSON %s
// NOTJSON: error: {{.*}}notjson.json: not valid JSON
// NOTJSON-NEXT: exit 2
// RUN: echo '{"format": "tierwise-profile", "version": 1}' > %t.format.json
// RUN: (%bin/tierwise-rewrite --placement %t.format.json %s --; echo "exit $?") 2>&1 | FileCheck --check-prefix=FORMAT %s
// FORMAT: error: {{.*}}format.json: field 'format' must be "tierwise-placement"
// FORMAT-NEXT: exit 2
// RUN: echo '{"format": "tierwise-placement", "version": 1, "default_tier": "dram", "sites": [{"stack": "a+0x1"}]}' > %t.site.json
// RUN: (%bin/tierwise-rewrite --placement %t.site.json %s --; echo "exit $?") 2>&1 | FileCheck --check-prefix=SITE %s
// SITE: error: {{.*}}site.json: sites[0] needs string fields 'stack' and 'tier'
// SITE-NEXT: exit 2
// RUN: (%bin/tierwise-rewrite --placement %S/Inputs/no-sites-elsewhere.json; echo "exit $?") 2>&1 | FileCheck --check-prefix=NOFILES %s
// NOFILES: error: no FILES given
// NOFILES-NEXT: exit 2
// RUN: rm -rf %t.empty && mkdir %t.empty
// RUN: (%bin/tierwise-rewrite --placement %S/Inputs/no-sites-elsewhere.json -p %t.empty %s; echo "exit $?") 2>&1 | FileCheck --check-prefix=NODB %s
// NODB: error: -p {{.*}}empty: no compile_commands.json there
// NODB-NEXT: exit 2
// RUN: (%bin/tierwise-rewrite --placement %S/Inputs/no-sites-elsewhere.json %t.nosuch.c --; echo "exit $?") 2>&1 | FileCheck --check-prefix=NOSUCH %s
// NOSUCH: error: {{.*}}nosuch.c: no such file
// NOSUCH-NEXT: exit 2
// RUN: (%bin/tierwise-rewrite --placement %S/Inputs/no-sites-elsewhere.json --bogus %s --; echo "exit $?") 2>&1 | FileCheck --check-prefix=BOGUS %s
// BOGUS: error: Unknown command line argument '--bogus'
// BOGUS-NEXT: exit 2
// The CLI verb reports its own bad arguments the same way:
// RUN: not %tierwise rewrite %s 2>&1 | FileCheck --check-prefix=CLI %s
// CLI: the following arguments are required: --placement
// RUN: (%tierwise rewrite --placement %t.notjson.json %s --; echo "exit $?") 2>&1 | FileCheck --check-prefix=CLIJSON %s
// CLIJSON: tierwise rewrite: error: {{.*}}notjson.json: not valid JSON
// CLIJSON-NEXT: exit 2
int main(void) { return 0; }
