# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# bash completion for perfex: subcommands, each subcommand's options,
# event names (perfex list), metric and metric group names (perfex list
# metrics, metricgroups), files for the options that take one, pids for
# -p/-t, and the command to run after the options of counting, record and
# --regions.  The tables above this part are generated from perfex's
# option table at build time (scripts/gen-completion.c); installed as
# /usr/share/bash-completion/completions/perfex.

# The argument kind of option $2 in table $1 (_perfex_args_KEY); fails
# when $2 takes no argument of its own word.
_perfex_arg_kind()
{
	local rest
	[[ $1 == *" $2="* ]] || return 1
	rest=${1#*" $2="}
	printf '%s' "${rest%% *}"
}

# Candidates of kind $2 for the word $3, with perfex $1.
_perfex_candidates()
{
	case $2 in
	event)
		"$1" list 2>/dev/null | awk 'NF >= 2 && $2 ~ /^\[/ { print $1 }'
		;;
	metric)
		"$1" list metrics 2>/dev/null | awk '/^  [^ ]/ && NF == 1 { print $1 }'
		"$1" list metricgroups 2>/dev/null | awk '/^  [^ ]/ { print $1 }'
		;;
	pid)
		command ls /proc 2>/dev/null | grep -E '^[0-9]+$'
		;;
	esac
}

_perfex()
{
	local line=${COMP_LINE:0:COMP_POINT} perfex=${COMP_WORDS[0]:-perfex}
	local -a words
	local cur key=stat first=1 i w kind opts args command=
	# The words as typed: bash splits at ':' and '=' too (COMP_WORDBREAKS),
	# which would cut syscalls:sys_enter_read and --event=x in two.
	read -r -a words <<<"$line"
	if [[ $line == *[[:space:]] || ${#words[@]} -eq 0 ]]; then
		cur=
	else
		cur=${words[${#words[@]}-1]}
		unset 'words[${#words[@]}-1]'
	fi
	COMPREPLY=()

	# The subcommand: the first word after perfex, if it names one.
	w=${words[1]-}
	if [ ${#words[@]} -ge 2 ]; then
		if [ "$w" = help ]; then
			[ ${#words[@]} -eq 2 ] &&
				COMPREPLY=($(compgen -W "${_perfex_subcommands#help }" -- "$cur"))
			return 0
		elif [[ " $_perfex_subcommands " == *" $w "* ]]; then
			key=$w first=2
		elif [[ $_perfex_words == *" $w="* ]]; then
			key=${_perfex_words#*" $w="}
			key=${key%% *} first=2
		fi
	fi
	opts=_perfex_opts_$key args=_perfex_args_$key
	opts=${!opts-} args=${!args-}

	# Past "--" or the command (counting, record and --regions run one
	# from their first argument on), the words are the command's.
	for ((i = first; i < ${#words[@]}; i++)); do
		w=${words[i]}
		if [ "$w" = -- ]; then
			command=$((i + 1)); break
		elif [[ $w == -* ]]; then
			_perfex_arg_kind "$args" "$w" >/dev/null && ((i++))
		elif [[ $key == @(stat|record|regions) ]]; then
			command=$i; break
		fi
	done
	if [ -n "$command" ]; then
		if [ "$command" -ge ${#words[@]} ]; then
			COMPREPLY=($(compgen -c -- "$cur"))
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		return 0
	fi

	# The argument of the option before, or of --option=ARG.
	local prefix= part=$cur
	if [[ $cur == --*=* ]] && kind=$(_perfex_arg_kind "$args" "${cur%%=*}"); then
		prefix=${cur%%=*}= part=${cur#*=}
	elif [ ${#words[@]} -gt "$first" ] &&
	     kind=$(_perfex_arg_kind "$args" "${words[${#words[@]}-1]}"); then
		:
	elif [[ $cur == -* ]]; then
		if [ ${#words[@]} -eq 1 ]; then
			for w in $_perfex_words; do
				opts="$opts ${w%%=*}"
			done
			opts="$opts --version"
		fi
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		kind=none
	elif [ ${#words[@]} -eq 1 ]; then
		COMPREPLY=($(compgen -W "${_perfex_subcommands#help } help" -- "$cur"))
		kind=none
	else
		# report, script, list and info take no file arguments
		# beside their options; perfex list FILTER is free text.
		kind=none
	fi
	case $kind in
	none) ;;
	file) COMPREPLY=($(compgen -P "$prefix" -f -- "$part")) ;;
	event|metric)
		# The last item of a comma list, or of an {event,group}.
		local item=${part##*[,\{]}
		prefix=$prefix${part:0:${#part}-${#item}}
		COMPREPLY=($(compgen -P "$prefix" \
			-W "$(_perfex_candidates "$perfex" "$kind")" -- "$item"))
		;;
	pid) COMPREPLY=($(compgen -P "$prefix" -W "$(_perfex_candidates "$perfex" pid)" -- "$part")) ;;
	esac

	# bash replaces only its own last word, which ends at the last ':' or
	# '=' of cur: the replies must not repeat what comes before it.
	local cut=${cur%"${cur##*[:=]}"}
	if [ -n "$cut" ] && [[ $COMP_WORDBREAKS == *[:=]* ]]; then
		COMPREPLY=("${COMPREPLY[@]#"$cut"}")
	fi
	return 0
}
complete -F _perfex -o bashdefault -o default perfex
