#!/usr/bin/env bash
# Fails if include/ shows heap, exception, I/O or dynamic-size constructs outside comments.
set -u
dir=$1
pattern='\bnew\b|\bmalloc\(|\bfree\(|std::(vector|string|map|unordered_map|list|deque|function|shared_ptr|unique_ptr)\b|Eigen::Dynamic|\bDynamic\b|\bthrow\b|\btry\b|\bcatch\b|<iostream>|<cstdio>|std::cout|printf\(|dynamic_cast|typeid'
hits=$(grep -rnE "$pattern" "$dir" | grep -vE '^\S+:[0-9]+:\s*(//|\*)' | grep -vE '//.*('"$pattern"')' )
if [ -n "$hits" ]; then
  echo "include/ must not allocate, throw, print or use dynamic sizes:"
  echo "$hits"
  exit 1
fi
echo "include/: no heap, exception, I/O or dynamic-size constructs"
