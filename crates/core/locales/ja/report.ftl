# 運営者向けの日次レポート(日本語)。チャネル、頻度、状態の名前は
# digestd が保存しているとおりに表示します。

report-subject = digestd レポート { $date }
report-title = digestd { $version } レポート({ $at } 時点)
report-digests-since = { $since } 以降のダイジェスト:
report-none-due = 予定なし
report-channel = チャネル
report-frequency = 頻度
report-due = 予定
report-posted = 投入
report-empty = 空
report-sent = 送信
report-failed = 失敗
report-bounces = バウンス: 恒久的 { $hard } 件、一時的 { $soft } 件。無効化したアドレス: { $disabled } 件
report-retries = 再試行待ち: { $count } 件
report-oldest = 未完了の最古のリクエスト: { $id }({ $status })、{ $at } に投入
report-oldest-none = 未完了の最古のリクエスト: なし
report-latest-tick = 最後のティック: { $at }
report-latest-run = 最後に送信したダイジェスト: 購読 { $subscription }、期間 { $period }、予定 { $due }、送信 { $sent }({ $late } 秒遅れ)
report-latest-run-none = 最後に送信したダイジェスト: 24時間以内になし
report-lease = リース { $job }: 保持者 { $holder }、最終実行 { $at }
report-nobody = なし
report-never = なし
