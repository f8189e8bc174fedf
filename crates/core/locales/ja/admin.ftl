# /admin 以下の運用者向けページ(日本語、`[i18n] operator_locale`)。
# ステータス、チャネル、種類、結果の名前も翻訳して表示します(リンク、フィルター、フォームは保存されている語のまま)。

## すべてのページ

admin-site = digestd 管理
admin-footer = digestd · 運用者向けページ
admin-nav-status = ステータス
admin-nav-requests = リクエスト
admin-nav-subscribers = 購読者
admin-nav-grid = 週間グリッド
admin-signed-in = トークン { $token } でログイン中
admin-logout = ログアウト
admin-not-done = 実行されませんでした
admin-back = 戻る
admin-filter = 絞り込む
admin-yes = はい
admin-no = いいえ

## ログイン

admin-login = 運用者ログイン
admin-login-token = 管理トークン
admin-login-note = スコープが admin の API トークン（{ $command }）。セッション Cookie と交換され、トークン自体はブラウザに保存されません。
admin-login-button = ログイン
admin-login-bad = 有効な管理トークンではありません。何も変更されていません。
admin-login-many = このネットワークからのログイン失敗が多すぎます。15分後にもう一度お試しください。何も確認されていません。
admin-login-expired = このフォームの有効期限が切れました。トークンをもう一度入力してください。何も確認されていません。

## ステータス

admin-status-at = { $now } 時点のステータス
admin-queue = キュー
admin-th-status = ステータス
admin-th-requests = リクエスト数
admin-oldest-pending = 最も古い保留中のリクエスト:
admin-ticks = 最近のティック
admin-ticks-none = 実行を記録したティックはまだありません。
admin-th-tick-at = ティック時刻
admin-th-runs = 実行数
admin-th-digests = ダイジェスト数
admin-th-empty-runs = 空の実行数
admin-th-late = 最後の実行の遅れ
admin-ticks-note = 実行が記録したとおりのティックです（送るものがなかったティックは実行を記録しません）。各ティックの所要時間は保存されません。このプロセスのティック所要時間は { $metrics }（{ $metric }）で確認できます。
admin-leases = リース
admin-leases-none = まだ実行されたジョブはありません。
admin-th-job = ジョブ
admin-th-holder = 保持者
admin-th-until = 期限
admin-th-last-run = 最後の実行
admin-events = 運用者向けイベント
admin-events-note = 待機中: すべて。送信済み・失敗・スキップ: 直近24時間のもの。
admin-th-events = イベント数
admin-events-oldest = 最も古い待機中のイベント:
admin-events-failure = 最後の失敗:
admin-events-commands = { $list } で一覧を表示し、{ $replay } で期間を指定して再送できます。
admin-events-off = 送信しません: [events] url が空です
admin-events-to = 送信先 { $url }
admin-event-failed = イベント { $id }（{ $kind }）: { $error }
admin-on-time = 遅れなし
admin-delay-s = { $s }秒
admin-delay-min = { $min }分{ $s }秒
admin-delay-h = { $h }時間{ $min }分
admin-ago = { $at }（{ $delay }前）
admin-just-now = { $at }（たった今）
admin-none-pending = 保留中なし
admin-nobody = なし
admin-expired-lease = なし（{ $holder } のリースは期限切れ）
admin-never = 未実行

## リクエスト

admin-filter-status = ステータス
admin-requests-any = すべて
admin-filter-sender = 送信者
admin-filter-recipient = 受信者
admin-requests-none = 該当するリクエストはありません。
admin-th-id = ID
admin-th-kind = 種類
admin-th-from = 送信者
admin-th-to = 宛先
admin-th-subject = 件名
admin-th-requested = 受付
admin-th-finished = 完了
admin-requests-older = 古いリクエスト
admin-request = リクエスト { $id }
admin-cancel = このリクエストを取り消す
admin-cancel-note = まだ配信されていないものは送信されません。
admin-cancelled = 取り消しました。
admin-recipients = 受信者
admin-not-expanded = まだ展開されていません。キューの処理がまだ取り上げていません。
admin-no-recipient = なし: グループの全メンバーが配信を停止したか、グループにメンバーがいませんでした。
admin-th-party = 相手
admin-th-channel = チャネル
admin-th-address = アドレス
admin-th-state = 状態
admin-th-retries = 再試行
admin-th-last-reply = 最後の応答
admin-delivered = 配信済み
admin-gave-up = 断念
admin-open = 未完了
admin-attempts = 試行
admin-attempts-none = まだ試行はありません。
admin-th-when = 日時
admin-th-outcome = 結果
admin-th-reply = 応答
admin-all-requests = すべてのリクエスト

## 購読者と購読

admin-filter-name = 名前に含む
admin-filter-disabled = 無効なアドレスがある人のみ
admin-users-none = 該当するユーザーはいません。
admin-th-verified = 確認済み
admin-th-bounces = バウンス
admin-disabled = 無効
admin-enabled = 有効
admin-reenable = 再び有効にする
admin-enabled-notice = 有効にしました。メッセージは再びこのアドレスに届き、バウンス数は0から数え直します。
admin-no-subscriptions = 購読はありません。
admin-their-time = { $when }（購読者の現地時刻）
admin-paused = 一時停止中
admin-details = 詳細
admin-opted-out = 配信を停止したグループ購読:
admin-more = さらに表示
admin-subscription = 購読 { $id }
admin-party-time = { $when }（{ $party } の時刻）
admin-optouts = 配信を停止したメンバー
admin-optouts-none = なし: ダイジェストは全メンバーに届きます。
admin-optouts-note = 本人かあなたが解除するまで、これらのメンバーにはダイジェストが届きません。
admin-th-member = メンバー
admin-th-since = 開始日時
admin-clear = 解除
admin-cleared = 解除しました。次回から、グループのダイジェストはこのメンバーにも再び届きます。

## 週間グリッド(図と表も翻訳します。`digestd grid` は英語のままです)

admin-grid = 週間グリッド
admin-grid-hours = 時刻の基準
admin-grid-server = サーバー時刻（UTC）
admin-grid-local = 各購読者の現地時刻
admin-grid-week = 週の開始
admin-grid-user = ユーザー
admin-grid-all = すべて
admin-grid-show = 表示
admin-grid-table = 表で見る
admin-grid-title = { $week } からの週のダイジェスト（{ $scope }）
admin-grid-scope-all = 全ユーザー
admin-grid-scope-user = ユーザー { $user }
admin-grid-table-title = { $title }、{ $time }
admin-grid-time-local = 現地時刻
admin-grid-time-server = サーバー時刻（UTC）
admin-grid-subtitle = 週の時間帯ごとのダイジェスト数、{ $time }
admin-grid-cell = { $day } { $hour } { $time }: ダイジェスト { $digests } 件、空の実行 { $empty } 件
admin-grid-dot = 空の実行 { $empty } 件
admin-grid-hour-axis = 時刻（{ $time }）
admin-grid-day-axis = 曜日
admin-grid-scale = 1 時間あたりのダイジェスト数:
admin-grid-empty-runs = 空の実行 { $empty } 件（実行したが送るものがなかった）は数えていません
admin-grid-peak = ピーク: { $day } { $hour }（全 { $total } 件中 { $digests } 件）
admin-grid-total = 合計

## キューが保存しているものの名前（リンク、フィルター、フォームは保存されている語のまま）

admin-status-pending = 待機中
admin-status-sending = 送信中
admin-status-sent = 送信済み
admin-status-partial-failure = 一部失敗
admin-status-failed = 失敗
admin-status-cancelled = 取り消し済み
admin-event-status-pending = 待機中
admin-event-status-sent = 送信済み
admin-event-status-failed = 失敗
admin-event-status-skipped = スキップ
admin-kind-digest = ダイジェスト
admin-kind-notification = 通知
admin-outcome-sent = 受理
admin-outcome-transient = 一時的な拒否
admin-outcome-permanent = 恒久的な拒否
admin-outcome-gave-up = 断念

## フィルターやフォームが受け付けなかったもの（入力された値はエスケープし、切り詰めて表示します。何も変更していません）

admin-refused-long = 「{ $field }」欄が { $max } 文字を超えています。
admin-refused-control = 「{ $field }」欄に制御文字が含まれています。制御文字は使えません。
admin-refused-status = 「{ $value }」はステータスではありません。一覧から選んでください。
admin-refused-name = 「{ $value }」は有効な名前ではありません。英数字と「.」「_」「-」を 1～{ $max } 文字で使ってください。
admin-refused-no-party = 「{ $value }」という名前のユーザーもグループもありません。
admin-refused-before = 「{ $value }」はリクエスト ID ではありません。
admin-refused-disabled = 「{ $value }」は「{ admin-filter-disabled }」の値として使えません。1 を指定するか、空にしてください。
admin-refused-time = 「{ $value }」はグリッドの時刻の種類ではありません。{ admin-grid-server }か{ admin-grid-local }を選んでください。
admin-refused-week = 「{ $value }」は日時ではありません。RFC 3339 形式（例: 2026-11-23T00:00:00Z）で指定してください。
admin-refused-channel = 「{ $value }」はチャネルではありません。
admin-refused-no-request = そのリクエストはありません。
admin-refused-no-subscription = その購読はありません。
admin-refused-not-open = このリクエストはすでに終了しています（{ $status }）。取り消せるのは待機中か送信中のリクエストだけです。
admin-refused-no-address = { $party } には { $channel } のアドレスがありません。
admin-refused-not-opted-out = { $member } はこの購読の配信を停止していません。
