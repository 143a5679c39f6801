#!/usr/bin/env python3
"""What one acquire -> complete cycle of the Lua scripts costs inside Redis, without any client
or network: both scripts (each with lib.lua in front, as the service loads them) run N times in
one EVAL on 64 fresh lcids, and the wall time of that EVAL is divided by N. Needs redis-cli and a
Redis to spare (it writes bench keys).

  bench/script-cost.py [--port 6379] [--cycles 5000] [--runs 6] [--lua src/main/resources/lua]
"""
import argparse
import re
import subprocess
import time


def wrapped(lua_dir, name):
    body = open(f'{lua_dir}/lib.lua').read() + '\n' + open(f'{lua_dir}/{name}.lua').read()
    # KEYS and ARGV are read-only globals inside EVAL: pass them as parameters instead.
    body = re.sub(r'\bKEYS\b', 'K_', body)
    body = re.sub(r'\bARGV\b', 'A_', body)
    return f'local function {name.upper()}(K_, A_)\n{body}\nend\n'


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--port', default='6379')
    parser.add_argument('--cycles', type=int, default=5000)
    parser.add_argument('--runs', type=int, default=6)
    parser.add_argument('--lua', default='src/main/resources/lua')
    args = parser.parse_args()
    source = wrapped(args.lua, 'acquire') + wrapped(args.lua, 'complete') + '''
local n, base, last = tonumber(ARGV[1]), ARGV[2], nil
for i = 1, n do
  local t = 'baton:{default|' .. base .. (i % 64) .. '}:'
  local k = { t .. 'lock', t .. 'queue', t .. 'requests', t .. 'fence', t .. 'purge' }
  ACQUIRE(k, { 'r' .. i, 'tok' .. i, '30000', '', '1000', '5', '3600000', '86400000', '604800000' })
  last = COMPLETE(k, { 'tok' .. i, 'r' .. i, '', '3600000', '86400000' })[1]
end
return last
'''
    figures = []
    for run in range(args.runs):
        base = f'script-cost-{time.time_ns()}-'
        start = time.perf_counter()
        out = subprocess.run(['redis-cli', '-p', args.port, 'EVAL', source, '0', str(args.cycles), base],
                             capture_output=True, text=True, check=True)
        took = time.perf_counter() - start
        if out.stdout.strip() != 'RELEASED':
            raise SystemExit(f'unexpected reply: {out.stdout.strip()} {out.stderr.strip()}')
        figures.append(took * 1e6 / args.cycles)
        keys = subprocess.run(['redis-cli', '-p', args.port, '--scan', '--pattern', f'baton:{{default|{base}*'],
                              capture_output=True, text=True).stdout.split()
        for i in range(0, len(keys), 500):
            subprocess.run(['redis-cli', '-p', args.port, 'DEL', *keys[i:i + 500]], capture_output=True)
    figures.sort()
    print(f'{{"usPerCycle": {{"min": {figures[0]:.1f}, "median": {figures[len(figures) // 2]:.1f}, '
          f'"max": {figures[-1]:.1f}}}, "cycles": {args.cycles}, "runs": {args.runs}}}')


if __name__ == '__main__':
    main()
