# O relatório diário do operador em português do Brasil. Os nomes de
# canal, frequência e status aparecem como o digestd os guarda.

report-subject = Relatório do digestd { $date }
report-title = Relatório do digestd { $version } em { $at }
report-digests-since = Resumos desde { $since }:
report-none-due = nenhum previsto
report-channel = canal
report-frequency = frequência
report-due = previstos
report-posted = na fila
report-empty = vazios
report-sent = enviados
report-failed = falharam
report-bounces = Devoluções: { $hard } permanentes, { $soft } temporárias; endereços desativados: { $disabled }
report-retries = Novas tentativas pendentes: { $count }
report-oldest = Pedido não concluído mais antigo: { $id } ({ $status }), feito em { $at }
report-oldest-none = Pedido não concluído mais antigo: nenhum
report-latest-tick = Último tick: { $at }
report-latest-run = Último resumo enviado: assinatura { $subscription }, período { $period }, previsto { $due }, enviado { $sent } ({ $late } s de atraso)
report-latest-run-none = Último resumo enviado: nenhum nas últimas 24 horas
report-lease = Trava { $job }: com { $holder }; última execução { $at }
report-nobody = ninguém
report-never = nunca
